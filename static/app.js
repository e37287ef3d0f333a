// Gatehouse's own script. Progressive enhancement only: every page works without it.
// - approval page: "Submit answers" is enabled once every question has an answer;
//   typing an "other" answer selects its radio.
// - lists (inbox, session page): j/k move between cards, a approves, r rejects,
//   Enter opens; focus stays in place when the live list is replaced; the inbox's
//   pending count is kept in the tab title.
(function () {
  "use strict";

  // Live pages hold an EventSource each. A page kept in the back/forward cache would
  // keep its stream open, and a browser allows only six connections per host over
  // HTTP/1.1, so a few page changes would stall every later request. Close the
  // streams when the page is hidden; a page restored from that cache reloads, since
  // its state is stale anyway. htmx.createEventSource is the SSE extension's hook.
  var sources = [];
  if (window.htmx && typeof window.htmx.createEventSource === "function") {
    var create = window.htmx.createEventSource;
    window.htmx.createEventSource = function (url) {
      var source = create(url);
      sources.push(source);
      return source;
    };
  }
  window.addEventListener("pagehide", function () {
    sources.forEach(function (s) { s.close(); });
    sources = [];
  });
  window.addEventListener("pageshow", function (e) {
    if (e.persisted) {
      window.location.reload();
    }
  });

  function answered(fs) {
    if (fs.querySelector("input[type=checkbox]:checked, input[type=radio]:checked:not([data-other-choice])")) {
      return true;
    }
    var other = fs.querySelector("[data-other-text]");
    return !!other && other.value.trim() !== "";
  }

  function wireQuestions(form) {
    var submit = form.querySelector("[data-needs-answers]");
    if (!submit) {
      return;
    }
    var hint = form.querySelector("[data-answers-hint]");
    var sets = Array.prototype.slice.call(form.querySelectorAll("[data-question]"));
    function update() {
      var ok = sets.every(answered);
      submit.disabled = !ok;
      if (hint) {
        hint.hidden = ok;
      }
    }
    form.addEventListener("input", function (e) {
      var t = e.target;
      if (t.matches("[data-other-text]") && t.value.trim() !== "") {
        var radio = t.closest("[data-question]").querySelector("[data-other-choice]");
        if (radio) {
          radio.checked = true;
        }
      }
      update();
    });
    form.addEventListener("change", update);
    update();
  }

  function cards() {
    return Array.prototype.slice.call(document.querySelectorAll(".card"));
  }

  var focusMemo = null;

  document.addEventListener("focusin", function (e) {
    var card = e.target.closest ? e.target.closest(".card") : null;
    focusMemo = card ? { id: card.getAttribute("data-eid"), index: cards().indexOf(card) } : null;
  });

  function restoreFocus() {
    var active = document.activeElement;
    if (!focusMemo || (active && active !== document.body && active.isConnected)) {
      return;
    }
    var list = cards();
    if (!list.length) {
      return;
    }
    var same = list.filter(function (c) { return c.getAttribute("data-eid") === focusMemo.id; })[0];
    (same || list[Math.min(focusMemo.index, list.length - 1)]).focus();
  }

  function updateTitle() {
    var list = document.getElementById("inbox-list");
    if (!list) {
      return;
    }
    var n = list.querySelectorAll(".card").length;
    document.title = (n > 0 ? "(" + n + ") " : "") + list.getAttribute("data-title-base") + " — Gatehouse";
  }

  function watch(id) {
    var el = document.getElementById(id);
    if (!el) {
      return;
    }
    new MutationObserver(function () {
      restoreFocus();
      updateTitle();
    }).observe(el, { childList: true, subtree: true });
  }

  document.addEventListener("keydown", function (e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) {
      return;
    }
    var t = e.target;
    if (t.closest && t.closest("input, textarea, select, [contenteditable]")) {
      return;
    }
    var list = cards();
    if (!list.length) {
      return;
    }
    var current = t.closest ? t.closest(".card") : null;
    var i = current ? list.indexOf(current) : -1;
    var button;
    switch (e.key) {
      case "j":
        list[Math.min(i + 1, list.length - 1)].focus();
        break;
      case "k":
        list[Math.max(i - 1, 0)].focus();
        break;
      case "a":
      case "r":
        button = current && current.querySelector("[data-shortcut=" + e.key + "]");
        if (!button) {
          return;
        }
        button.click();
        break;
      case "Enter":
        if (!current || t !== current) {
          return;
        }
        window.location.href = current.getAttribute("data-open");
        break;
      default:
        return;
    }
    e.preventDefault();
  });

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("form[data-kind=question]"), wireQuestions);
    // After a refused submit, start at the summary of what needs fixing.
    var formError = document.querySelector("[data-testid=form-error]");
    if (formError) {
      formError.focus();
    }
    watch("inbox-list");
    watch("session-body");
    updateTitle();
  });
})();
