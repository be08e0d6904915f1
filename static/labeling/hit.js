// The HIT screen's keyboard and "Other" list. Answers themselves are posted by htmx attributes in
// templates/labeling/partials/screen.html; this file only adds shortcuts, filtering, timing, the
// retry of a failed request and the save of a pick still waiting when the page is left.
(function () {
  "use strict";
  // htmx re-runs body scripts when it restores a page from history: install the handlers once.
  if (window.hitScreenInstalled) return;
  window.hitScreenInstalled = true;

  let shownAt = Date.now();

  function itemForm() { return document.getElementById("item-form"); }

  function isTyping(target) {
    return target instanceof HTMLInputElement && (target.type === "text" || target.type === "search")
      || target instanceof HTMLTextAreaElement;
  }

  function pick(radio) {
    if (!radio) return;
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function clickNav(which) {
    const button = document.querySelector('#hit-item [data-nav="' + which + '"]');
    if (button && !button.disabled) button.click();
  }

  function openOther() {
    const panel = document.getElementById("other-panel");
    if (!panel) return;
    panel.open = true;
    document.getElementById("label-filter").focus();
  }

  // The arrow that points the way the page reads goes on: right in English, left in Arabic
  // (<html dir="rtl">), as the Next and Back buttons' arrows show.
  function isRightToLeft() { return document.documentElement.dir === "rtl"; }
  function forwardKey() { return isRightToLeft() ? "ArrowLeft" : "ArrowRight"; }
  function backwardKey() { return isRightToLeft() ? "ArrowRight" : "ArrowLeft"; }

  // The words this file shows, in the page's language (templates/labeling/partials/hit_script.html).
  function words(name, fallback) {
    const strings = document.getElementById("hit-strings");
    return (strings && strings.dataset[name]) || fallback;
  }

  function visibleLabels() {
    return Array.from(document.querySelectorAll("#label-list li")).filter((li) => !li.hidden);
  }

  function filterLabels(query) {
    const words = query.toLowerCase().trim();
    document.querySelectorAll("#label-list li").forEach((li) => {
      li.hidden = words !== "" && !li.dataset.filter.includes(words);
    });
  }

  document.addEventListener("input", (event) => {
    if (event.target.id === "label-filter") filterLabels(event.target.value);
    if (event.target.id === "new-label-text") {
      const radio = document.querySelector('#item-form input[name="answer"][value="__new__"]');
      if (radio) radio.checked = event.target.value.trim() !== "";
    }
  });

  document.addEventListener("keydown", (event) => {
    const screen = document.getElementById("hit-item");
    if (!screen || event.ctrlKey || event.metaKey || event.altKey) return;
    // htmx wires a swapped-in screen only when it settles (some ms later); a fast key must not
    // fall into that gap. Processing twice is a no-op.
    if (window.htmx) window.htmx.process(screen);
    const target = event.target;
    if (isTyping(target)) {
      if (event.key === "Escape") { target.blur(); event.preventDefault(); }
      if (event.key === "Enter") {
        event.preventDefault();
        if (target.id === "label-filter") {
          const first = visibleLabels()[0];
          if (first) { pick(first.querySelector("input")); target.blur(); }
        } else {
          if (target.id === "new-label-text") target.dispatchEvent(new Event("change", { bubbles: true }));
          clickNav("next");
        }
      }
      return;
    }
    if (["1", "2", "3"].includes(event.key)) {
      pick(document.querySelector('#item-form input[data-key="' + event.key + '"]'));
    } else if (event.key === "4" || event.key === "o" || event.key === "O") {
      // "4" is the key shown (an "O" on a key cap reads as zero); "o" still works for old hands
      event.preventDefault();
      openOther();
    } else if (event.key === forwardKey() || event.key === "Enter") {
      event.preventDefault();
      clickNav("next");
    } else if (event.key === backwardKey()) {
      event.preventDefault();
      clickNav("back");
    }
  });

  // Time spent on a screen travels with every save of it: the seconds since the screen was shown
  // (or since its last save), measured here as the request is built. htmx 2 hands over the
  // parameters as a FormData proxy without an `in` check, so the form's own elements decide.
  // A request carrying a pick not yet saved counts the seconds until the pick, not until the
  // (delayed) request: the time spent deciding, as when every pick was sent at once.
  function secondsOnScreen() {
    const until = pendingPick && pickedAt > shownAt ? pickedAt : Date.now();
    const seconds = ((until - shownAt) / 1000).toFixed(1);
    shownAt = until;
    return seconds;
  }
  document.addEventListener("htmx:configRequest", (event) => {
    const form = itemForm();
    if (form && form.contains(event.detail.elt)) event.detail.parameters.seconds = secondsOnScreen();
  });
  document.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target && event.detail.target.id !== "save-status") shownAt = Date.now();
  });

  // A pick is saved AUTOSAVE_DELAY_MS after it was made (the hx-trigger's delay), or by the Next or
  // Back that carries it first: one request per screen for an annotator who picks and moves on.
  // A page left in between (closed, reloaded, sent to the background on a phone) sends the pick as
  // it goes, so it is not lost.
  let pendingPick = false;
  let pickedAt = 0;
  document.addEventListener("change", (event) => {
    if (event.target.closest && event.target.closest("#item-form .answers")) {
      pendingPick = true;
      pickedAt = Date.now();
    }
  });
  document.addEventListener("htmx:beforeRequest", (event) => {
    const form = itemForm();
    if (!form || !form.contains(event.detail.elt)) return;
    if (!pendingPick && event.detail.elt.matches(".answers")) {
      event.preventDefault(); // the delayed save of a pick already sent as the page was hidden
      return;
    }
    pendingPick = false; // this request carries it
  });
  function sendPendingPick() {
    const form = itemForm();
    if (!pendingPick || !form || !navigator.sendBeacon) return;
    const data = new FormData(form);
    data.set("go", "stay");
    data.set("seconds", secondsOnScreen());
    // a beacon sends no headers: a screen swapped in by htmx has no form token of its own (htmx
    // sends the page's, from the body's hx-headers), so the beacon carries that one in its body
    const token = pageToken();
    if (!data.has("csrfmiddlewaretoken") && token) data.set("csrfmiddlewaretoken", token);
    if (navigator.sendBeacon(form.getAttribute("action"), data)) pendingPick = false;
  }
  function pageToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch (error) {
      return "";
    }
  }
  window.addEventListener("pagehide", sendPendingPick);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") sendPendingPick();
  });

  // A request that fails (no network, or the server answering 5xx while it restarts: a 503 with
  // Retry-After from config/web/db_unavailable.py) leaves the screen and its answer as they were: htmx
  // swaps nothing on an error. Say so next to the buttons and send it again the way the annotator
  // would (pick the answer again, press the same button), after Retry-After or 1, 2, 4... s; after
  // RETRY_LIMIT tries, ask the annotator to press the button. The server stores a replayed answer
  // once and a replayed submit once.
  const RETRY_LIMIT = 6;
  let failures = 0;
  let retryTimer = null;

  function showStatus(text, bad) {
    const status = document.getElementById("save-status");
    if (!status) return;
    const span = document.createElement("span");
    span.className = bad ? "bad" : "ok";
    span.setAttribute("role", bad ? "alert" : "status");
    span.textContent = text;
    status.replaceChildren(span);
  }

  // The same action again: which button or pick sent the request that failed.
  function replayOf(detail) {
    const elt = detail.elt;
    if (elt && elt.id === "submit-form") return () => clickNav("next");
    const go = detail.requestConfig && detail.requestConfig.formData ? detail.requestConfig.formData.get("go") : null;
    if (go === "next" || go === "back") return () => clickNav(go);
    const picked = document.querySelector('#item-form input[name="answer"]:checked');
    if (picked) return () => picked.dispatchEvent(new Event("change", { bubbles: true }));
    return null;
  }

  function requestFailed(event) {
    const xhr = event.detail.xhr;
    const status = xhr ? xhr.status : 0;
    if (status && status < 500) return; // the server's own answer (a refusal), not a fault
    const form = itemForm();
    if (form && form.contains(event.detail.elt) && form.querySelector('input[name="answer"]:checked')) {
      pendingPick = true; // not saved: a page left before the retry still sends it
    }
    failures += 1;
    const replay = replayOf(event.detail);
    if (!replay || failures > RETRY_LIMIT) {
      showStatus(words("unreachable", "Not saved: the server cannot be reached. Your answer is still selected: press the button again."), true);
      failures = 0;
      return;
    }
    const header = xhr && status ? Number(xhr.getResponseHeader("Retry-After")) : NaN;
    const seconds = header > 0 ? Math.min(header, 30) : Math.min(2 ** (failures - 1), 16);
    const retrying = words("retrying", "Not saved yet: the server is briefly unavailable. Trying again in {seconds} s (your answer is kept).");
    showStatus(retrying.replace("{seconds}", String(seconds)), true);
    clearTimeout(retryTimer);
    retryTimer = setTimeout(replay, seconds * 1000);
  }

  document.addEventListener("htmx:responseError", requestFailed);
  document.addEventListener("htmx:sendError", requestFailed);
  document.addEventListener("htmx:timeout", requestFailed);
  document.addEventListener("htmx:afterRequest", (event) => {
    if (event.detail.successful) {
      failures = 0;
      clearTimeout(retryTimer);
    }
  });
})();
