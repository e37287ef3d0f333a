// Gatehouse's own script. Progressive enhancement only: every page works without it.
// - approval page: "Submit answers" is enabled once every question has an answer;
//   typing an "other" answer selects its radio.
// - lists (inbox, session page): j/k move between cards, a approves, r rejects,
//   Enter opens; focus stays in place when the live list is replaced; the inbox's
//   pending count is kept in the tab title.
// - inbox bulk answers: x selects the focused card, Shift+x (or Shift+click) a range,
//   * every card shown; Shift+a approves the selection, Shift+r moves to the reason
//   (Enter there rejects). The selection survives live updates of the list.
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
  // swappedAt is when a live update last replaced part of the page (ms).
  var swappedAt = 0;
  // armed is the risky card whose first "a" was pressed: a second "a" approves it.
  var armed = null;

  document.addEventListener("focusin", function (e) {
    var card = e.target.closest ? e.target.closest(".card") : null;
    focusMemo = card ? { id: card.getAttribute("data-eid"), index: cards().indexOf(card) } : null;
  });

  // rememberedCard is the card that had focus before a live update replaced the list:
  // the same prompt if it is still there, else the one now in its place.
  function rememberedCard() {
    var list = cards();
    if (!focusMemo || !list.length) {
      return null;
    }
    var same = list.filter(function (c) { return c.getAttribute("data-eid") === focusMemo.id; })[0];
    return same || list[Math.min(focusMemo.index, list.length - 1)];
  }

  function restoreFocus() {
    var active = document.activeElement;
    if (active && active !== document.body && active.isConnected) {
      return;
    }
    var card = rememberedCard();
    if (card) {
      card.focus();
    }
  }

  function updateTitle() {
    var list = document.getElementById("inbox-list");
    if (!list) {
      return;
    }
    var n = list.querySelectorAll(".card").length;
    document.title = (n > 0 ? "(" + n + ") " : "") + list.getAttribute("data-title-base") + " — Gatehouse";
  }

  // The bulk selection, by prompt id. The list is replaced whenever prompts come or go,
  // so the checked state lives here and is put back on the new checkboxes.
  var selected = new Set();
  var anchor = null;

  function boxes() {
    return Array.prototype.slice.call(document.querySelectorAll("input.card-select"));
  }

  function applySelection() {
    var shown = boxes();
    var present = new Set();
    shown.forEach(function (b) {
      present.add(b.value);
      b.checked = selected.has(b.value);
    });
    selected.forEach(function (id) {
      if (!present.has(id)) {
        selected.delete(id); // decided or filtered away: no longer part of the answer
      }
    });
    var count = document.querySelector("[data-selected-count]");
    if (count) {
      count.textContent = selected.size ? selected.size + " selected" : "";
    }
    var all = document.querySelector("[data-select-all]");
    if (all) {
      all.checked = shown.length > 0 && selected.size === shown.length;
      all.indeterminate = selected.size > 0 && selected.size < shown.length;
    }
  }

  function setSelected(id, on) {
    if (on) {
      selected.add(id);
    } else {
      selected.delete(id);
    }
  }

  // selectRange sets every card from the anchor to id (inclusive) to on.
  function selectRange(id, on) {
    var ids = boxes().map(function (b) { return b.value; });
    var from = ids.indexOf(anchor), to = ids.indexOf(id);
    if (from < 0 || to < 0) {
      setSelected(id, on);
      return;
    }
    ids.slice(Math.min(from, to), Math.max(from, to) + 1).forEach(function (x) { setSelected(x, on); });
  }

  function toggleCard(card, range) {
    var box = card && card.querySelector("input.card-select");
    if (!box) {
      return false;
    }
    var on = !selected.has(box.value);
    if (range && anchor) {
      selectRange(box.value, on);
    } else {
      setSelected(box.value, on);
    }
    anchor = box.value;
    applySelection();
    return true;
  }

  function selectAll(on) {
    boxes().forEach(function (b) { setSelected(b.value, on); });
    applySelection();
  }

  document.addEventListener("click", function (e) {
    var t = e.target;
    if (t.matches && t.matches("input.card-select")) {
      if (e.shiftKey && anchor) {
        selectRange(t.value, t.checked);
      } else {
        setSelected(t.value, t.checked);
      }
      anchor = t.value;
      applySelection();
    } else if (t.matches && t.matches("[data-select-all]")) {
      selectAll(t.checked);
    }
  });

  document.addEventListener("htmx:afterRequest", function (e) {
    var form = e.detail && e.detail.elt;
    if (form && form.id === "bulk-form" && e.detail.successful) {
      selected.clear();
      anchor = null;
      var reason = form.querySelector("[name=feedback]");
      if (reason) {
        reason.value = "";
      }
      applySelection();
    }
  });

  function watch(id) {
    var el = document.getElementById(id);
    if (!el) {
      return;
    }
    new MutationObserver(function () {
      swappedAt = Date.now();
      applySelection();
      restoreFocus();
      updateTitle();
    }).observe(el, { childList: true, subtree: true });
  }

  function clickBulk(testid) {
    var button = document.querySelector("#bulk-form [data-testid=" + testid + "]");
    if (button) {
      button.click();
    }
    return !!button;
  }

  document.addEventListener("keydown", function (e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) {
      return;
    }
    var t = e.target;
    // Typing goes to fields; a focused card checkbox still takes the list's keys.
    if (t.closest && t.closest("input, textarea, select, [contenteditable]") && !(t.matches && t.matches("input.card-select"))) {
      return;
    }
    var list = cards();
    if (!list.length) {
      return;
    }
    var current = t.closest ? t.closest(".card") : null;
    // A key pressed in the moment a live update swapped the cards meets the body: it
    // is meant for the card that had focus, so it goes there. Only right after a swap:
    // a person who clicked away from the cards has no card their keys act on.
    if (!current && (t === document.body || !t.isConnected) && Date.now() - swappedAt < 1000) {
      current = rememberedCard();
      if (current) {
        current.focus();
        t = current;
      }
    }
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
        // A high or critical request is approved by key only when "a" is pressed twice:
        // the first press asks, so a stray key never approves it.
        if (e.key === "a" && current.hasAttribute("data-risky") && armed !== current) {
          armed = current;
          current.setAttribute("data-armed", "");
          setTimeout(function () { if (armed === current) { armed = null; } current.removeAttribute("data-armed"); }, 3000);
          break;
        }
        armed = null;
        button.click();
        break;
      case "x":
      case "X":
        if (!toggleCard(current, e.shiftKey || e.key === "X")) {
          return;
        }
        break;
      case "*":
        if (!document.querySelector("[data-select-all]")) {
          return;
        }
        selectAll(selected.size !== boxes().length);
        break;
      case "A":
        if (!selected.size || !clickBulk("bulk-approve")) {
          return;
        }
        break;
      case "R":
        var reason = selected.size && document.querySelector("#bulk-form [name=feedback]");
        if (!reason) {
          return;
        }
        reason.focus();
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
    var allLabel = document.querySelector("[data-select-all-label]");
    if (allLabel) {
      allLabel.hidden = false; // selecting all needs this script
    }
    applySelection();
  });
})();

// Times: the server renders each <time data-local> in UTC with its day; here it is
// rewritten in the viewer's own time zone (the datetime attribute stays UTC). It runs
// on load and after every htmx swap, so live cards are converted too.
(function () {
  var fmt;
  try {
    fmt = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
  } catch (e) { return; }
  function localize(root) {
    var els = (root || document).querySelectorAll("time[data-local]");
    for (var i = 0; i < els.length; i++) {
      var el = els[i];
      if (el.dataset.localized) continue;
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d.getTime())) continue;
      el.textContent = fmt.format(d);
      el.dataset.localized = "1";
    }
  }
  document.addEventListener("DOMContentLoaded", function () { localize(document); });
  document.addEventListener("htmx:afterSwap", function (e) { localize(e.target); });
  if (document.readyState !== "loading") localize(document);
})();

// Scrollable regions (a long command, a plan, a diff) take keyboard focus,
// so a keyboard user can scroll them too (WCAG 2.1.1; axe's scrollable-region-focusable).
(function () {
  var sel = "pre:not(.card-preview), .markdown, .diff-file, [data-change]";
  function focusable(root) {
    var els = (root && root.querySelectorAll ? root : document).querySelectorAll(sel);
    for (var i = 0; i < els.length; i++) {
      var el = els[i];
      if (el.hasAttribute("tabindex")) continue;
      if (el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1) el.setAttribute("tabindex", "0");
    }
  }
  document.addEventListener("DOMContentLoaded", function () { focusable(document); });
  document.addEventListener("htmx:afterSettle", function (e) { focusable(e.target); });
  window.addEventListener("resize", function () { focusable(document); });
  if (document.readyState !== "loading") focusable(document);
})();
