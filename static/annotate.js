// Keyboard-driven rubric form. Each answer unit (one question, or one element of a repeated
// question) is a focusable <fieldset class="unit">; text units are their <textarea>.
//
// Rules (issue 14): a digit picks and moves on, but never into optional free text (Enter
// there would type a newline); Enter on a question and Ctrl+Enter anywhere submit once every
// required answer is in, and otherwise go to the first one missing; a conditional question
// (``required_if``) is marked required while its condition holds and is skipped (disabled, so
// not sent) while it does not; an empty checklist is confirmed before it is sent.
(function () {
  "use strict";
  const form = document.getElementById("rubric-form");
  if (!form) return;
  const help = document.getElementById("instructions");
  const confirmBox = document.getElementById("confirm-empty");
  const editable = form.hasAttribute("data-editable");
  const started = performance.now();
  const units = Array.from(form.querySelectorAll("fieldset.unit"));
  const questions = Array.from(form.querySelectorAll(".question"));
  const questionOf = (u) => u.closest(".question");
  const focusTarget = (u) => (u.dataset.type === "text" ? u.querySelector("textarea") : u);
  let active = 0;
  let emptyConfirmed = false;

  // ---------------------------------------------------------------- conditional questions
  const conditions = new Map(
    questions.filter((q) => q.dataset.when).map((q) => [q, JSON.parse(q.dataset.when)]),
  );

  function answerOf(name) {
    const picked = form.querySelector(`input[name="${CSS.escape(name)}"]:checked`);
    return picked ? picked.value : null;
  }

  // true / false for a conditional question, null for an unconditional one
  function conditionHolds(q) {
    const cond = conditions.get(q);
    if (!cond) return null;
    const current = cond.names.map(answerOf);
    return cond.when.some((row) => row.every((v, i) => v === current[i]));
  }

  const applies = (q) => conditionHolds(q) !== false;
  const isRequired = (q) => q.hasAttribute("data-required") || conditionHolds(q) === true;
  const available = (u) => applies(questionOf(u));
  const isOptionalText = (u) => u.dataset.type === "text" && !isRequired(questionOf(u));

  function refreshConditions() {
    conditions.forEach((_, q) => {
      const on = conditionHolds(q);
      q.classList.toggle("not-applicable", !on);
      const star = q.querySelector(".q-head .req");
      if (star) star.hidden = !on;
      q.querySelectorAll("fieldset.unit").forEach((u) => {
        if (editable) u.disabled = !on; // a skipped question sends nothing (no stale reason with "G")
        if (u.dataset.type === "text") {
          const ta = u.querySelector("textarea");
          ta.required = on;
          ta.setAttribute("aria-required", String(on));
        } else {
          u.setAttribute("aria-required", String(on));
          u.tabIndex = on ? 0 : -1;
        }
      });
      if (!on) clearError(q);
    });
  }

  // ---------------------------------------------------------------- moving between units
  // ``scroll`` false: focus without moving the page (on load, so a phone opens at the top of
  // the item, not part-way down at the first question: issue 25)
  function activate(i, focus = true, scroll = true) {
    if (!units.length) return;
    active = Math.max(0, Math.min(units.length - 1, i));
    units.forEach((u, j) => u.classList.toggle("active", j === active));
    if (focus) {
      focusTarget(units[active]).focus({ preventScroll: true });
      if (scroll) units[active].scrollIntoView({ block: "nearest" });
      else if (rubricScrolls()) scrollInsideRubric(units[active]);
    }
  }

  // Side by side (wide screens) the rubric is its own scroll box: on load only that box moves
  // to the first question, never the page.
  const rubricBox = form.closest(".rubric");
  const rubricScrolls = () => rubricBox && ["auto", "scroll"].includes(getComputedStyle(rubricBox).overflowY);
  function scrollInsideRubric(u) {
    const box = rubricBox.getBoundingClientRect();
    const r = u.getBoundingClientRect();
    if (r.bottom > box.bottom) rubricBox.scrollTop += r.bottom - box.bottom;
  }

  // the next (delta 1) or previous (-1) unit that applies, from ``from``; -1 if none
  function neighbour(from, delta, accept = available) {
    for (let j = from + delta; j >= 0 && j < units.length; j += delta) {
      if (accept(units[j])) return j;
    }
    return -1;
  }

  function move(delta) {
    const j = neighbour(active, delta);
    if (j >= 0) activate(j);
  }

  // after a pick: the next unit that applies and is not optional text; stay if there is none
  function advance() {
    const j = neighbour(active, 1, (u) => available(u) && !isOptionalText(u));
    activate(j >= 0 ? j : active);
  }

  units.forEach((u, i) => u.addEventListener("focusin", () => activate(i, false)));
  units.forEach((u, i) => u.addEventListener("click", () => activate(i, false)));

  // ---------------------------------------------------------------- answering
  function pick(unit, key) {
    const input = unit.querySelector(`input[data-key="${key}"]`);
    if (!input || input.disabled) return false;
    if (input.type === "checkbox") input.checked = !input.checked;
    else input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    return true;
  }

  function step(unit, delta) {
    const radios = Array.from(unit.querySelectorAll('input[type="radio"]'));
    if (!radios.length || radios[0].disabled) return;
    const cur = radios.findIndex((r) => r.checked);
    const next = cur < 0 ? (delta > 0 ? 0 : radios.length - 1) : Math.max(0, Math.min(radios.length - 1, cur + delta));
    radios[next].checked = true;
    radios[next].dispatchEvent(new Event("change", { bubbles: true }));
  }

  form.addEventListener("change", (ev) => {
    refreshConditions();
    const q = ev.target.closest && ev.target.closest(".question");
    if (q) clearError(q);
    if (ev.target.type === "checkbox") emptyConfirmed = false;
  });
  form.addEventListener("input", (ev) => {
    const q = ev.target.closest && ev.target.closest(".question");
    if (q && ev.target.value.trim()) clearError(q);
  });

  // ---------------------------------------------------------------- submitting
  function unitMissing(u) {
    if (u.dataset.type === "checklist") return false; // ticking nothing is an answer
    if (u.dataset.type === "text") return !u.querySelector("textarea").value.trim();
    return !u.querySelector("input:checked");
  }

  const firstMissing = () => units.findIndex((u) => available(u) && isRequired(questionOf(u)) && unitMissing(u));

  function clearError(q) {
    q.querySelectorAll(".client-error").forEach((p) => p.remove());
    if (!q.querySelector(".error")) q.classList.remove("has-error");
  }

  function showMissing(i) {
    const q = questionOf(units[i]);
    if (!q.querySelector(".client-error")) {
      const p = document.createElement("p");
      p.className = "error client-error";
      p.setAttribute("role", "alert");
      const label = units[i].querySelector("legend strong");
      p.textContent = (form.dataset.msgRequired || "an answer is required") + (label ? ` (${label.textContent})` : "");
      q.querySelector(".q-head").after(p);
    }
    q.classList.add("has-error");
    activate(i);
  }

  function emptyChecklists() {
    return units.filter(
      (u) => u.dataset.type === "checklist" && available(u) && !u.querySelector("input:checked"),
    );
  }

  function askEmpty(empty) {
    const names = empty.map((u) => {
      const q = questionOf(u);
      const el = u.querySelector("legend strong");
      return q.querySelector(".q-label").textContent + (el ? ` (${el.textContent})` : "");
    });
    // the sentence comes from the page (data-msg-empty, in its language) with a %(names)s slot
    const sentence = form.dataset.msgEmpty || "Nothing is ticked in %(names)s. Submit it as: none of these apply?";
    confirmBox.querySelector(".confirm-text").textContent = sentence.replace(
      "%(names)s",
      names.map((n) => `“${n}”`).join(", "),
    );
    confirmBox.returnValue = "";
    confirmBox.showModal();
    document.getElementById("confirm-empty-yes").focus();
  }

  if (confirmBox) {
    confirmBox.addEventListener("close", () => {
      if (confirmBox.returnValue === "confirm") {
        emptyConfirmed = true;
        form.requestSubmit();
      } else {
        const empty = emptyChecklists();
        if (empty.length) activate(units.indexOf(empty[0]));
      }
    });
  }

  // Every way of submitting (Enter, Ctrl+Enter, the button, a click) passes here.
  form.addEventListener("submit", (ev) => {
    const missing = firstMissing();
    if (missing >= 0) {
      ev.preventDefault();
      showMissing(missing);
      return;
    }
    const empty = emptyChecklists();
    if (empty.length && !emptyConfirmed && confirmBox) {
      ev.preventDefault();
      askEmpty(empty);
      return;
    }
    form.elements.duration_ms.value = String(Math.round(performance.now() - started));
  });

  function submit() {
    if (editable) form.requestSubmit();
  }

  // ---------------------------------------------------------------- keys
  document.addEventListener("keydown", (ev) => {
    if (confirmBox && confirmBox.open) return; // its buttons take Enter, the dialog takes Esc
    if (help && help.open) {
      if (ev.key === "?") { help.close(); ev.preventDefault(); }
      return;
    }
    const t = ev.target;
    const inText = t instanceof HTMLTextAreaElement || (t instanceof HTMLInputElement && t.type === "text");
    const inForm = form.contains(t) || t === document.body;
    const inOtherForm = !form.contains(t) && t.closest && t.closest("form, dialog") !== null;
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && !ev.altKey && !inOtherForm) {
      ev.preventDefault();
      submit();
      return;
    }
    if (inText) {
      if (ev.key === "Escape") t.blur();
      return;
    }
    if (ev.key === "?") { ev.preventDefault(); help && help.showModal(); return; }
    if (!inForm || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (t instanceof HTMLButtonElement) return; // the submit button submits by itself
    const unit = units[active];
    if (ev.key === "Enter") { ev.preventDefault(); submit(); return; }
    if (ev.key === "ArrowDown") { ev.preventDefault(); move(1); return; }
    if (ev.key === "ArrowUp") { ev.preventDefault(); move(-1); return; }
    if (!unit) return;
    if (ev.key === "ArrowRight") { ev.preventDefault(); step(unit, 1); return; }
    if (ev.key === "ArrowLeft") { ev.preventDefault(); step(unit, -1); return; }
    if (/^[0-9]$/.test(ev.key)) {
      ev.preventDefault();
      if (pick(unit, ev.key) && unit.dataset.type !== "checklist") advance();
    }
  });

  // Start on the first question with an error, else the first unanswered one (never optional
  // text), else the first that applies.
  refreshConditions();
  const firstError = units.findIndex((u) => available(u) && questionOf(u).classList.contains("has-error"));
  const firstEmpty = units.findIndex(
    (u) => available(u) && u.dataset.type !== "checklist" && u.dataset.type !== "text" && !u.querySelector("input:checked"),
  );
  const firstUsable = units.findIndex((u) => available(u) && !isOptionalText(u));
  // A question the server refused is brought into view; otherwise the page stays at the top.
  activate(firstError >= 0 ? firstError : firstEmpty >= 0 ? firstEmpty : Math.max(0, firstUsable), true, firstError >= 0);
})();
