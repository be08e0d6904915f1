"""A HIT and what it is made of, the lowest services: HIT and HITItem rows (`hits`), seats, the quiz
pool, a campaign's label set and policy, and labeling's audit trail. The task types build with
these; they import no service, action, page or platform above them."""
