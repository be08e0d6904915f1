"""What every request meets, from every app: middleware (the language, the messages, a database
away), the guard of staff pages and the one refusal page, the client's address, the filter that hides
server paths, the home page and `/healthz`, and the warm-up a web process does as it starts."""
