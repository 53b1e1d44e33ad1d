// Keyboard-driven rubric form. Each answer unit (one question, or one element of a repeated
// question) is a focusable <fieldset class="unit">; text units are their <textarea>.
(function () {
  "use strict";
  const form = document.getElementById("rubric-form");
  if (!form) return;
  const dialog = document.getElementById("instructions");
  const started = performance.now();
  const units = Array.from(form.querySelectorAll("fieldset.unit"));
  const focusTarget = (u) => (u.dataset.type === "text" ? u.querySelector("textarea") : u);
  let active = 0;

  function activate(i, focus = true) {
    if (!units.length) return;
    active = Math.max(0, Math.min(units.length - 1, i));
    units.forEach((u, j) => u.classList.toggle("active", j === active));
    if (focus) {
      const t = focusTarget(units[active]);
      t.focus({ preventScroll: true });
      units[active].scrollIntoView({ block: "nearest" });
    }
  }

  units.forEach((u, i) => u.addEventListener("focusin", () => activate(i, false)));
  units.forEach((u, i) => u.addEventListener("click", () => activate(i, false)));

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
    if (!radios.length) return;
    const cur = radios.findIndex((r) => r.checked);
    const next = cur < 0 ? (delta > 0 ? 0 : radios.length - 1) : Math.max(0, Math.min(radios.length - 1, cur + delta));
    radios[next].checked = true;
  }

  form.addEventListener("submit", () => {
    form.elements.duration_ms.value = String(Math.round(performance.now() - started));
  });

  document.addEventListener("keydown", (ev) => {
    if (dialog && dialog.open) {
      if (ev.key === "?") { dialog.close(); ev.preventDefault(); }
      return;
    }
    const t = ev.target;
    const inText = t instanceof HTMLTextAreaElement || (t instanceof HTMLInputElement && t.type === "text");
    const inForm = form.contains(t) || t === document.body;
    if (inText) {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && form.contains(t)) { ev.preventDefault(); form.requestSubmit(); }
      if (ev.key === "Escape") { t.blur(); }
      return;
    }
    if (ev.key === "?") { ev.preventDefault(); dialog && dialog.showModal(); return; }
    if (!inForm || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const unit = units[active];
    if (ev.key === "Enter") { ev.preventDefault(); form.requestSubmit(); return; }
    if (ev.key === "ArrowDown") { ev.preventDefault(); activate(active + 1); return; }
    if (ev.key === "ArrowUp") { ev.preventDefault(); activate(active - 1); return; }
    if (!unit) return;
    if (ev.key === "ArrowRight") { ev.preventDefault(); step(unit, 1); return; }
    if (ev.key === "ArrowLeft") { ev.preventDefault(); step(unit, -1); return; }
    if (/^[0-9]$/.test(ev.key)) {
      ev.preventDefault();
      if (pick(unit, ev.key) && unit.dataset.type !== "checklist") activate(active + 1);
    }
  });

  // Start on the first unanswered question, or the first with an error.
  const firstError = units.findIndex((u) => u.closest(".question").classList.contains("has-error"));
  const firstEmpty = units.findIndex((u) => u.dataset.type !== "checklist" && u.dataset.type !== "text" && !u.querySelector("input:checked"));
  activate(firstError >= 0 ? firstError : firstEmpty >= 0 ? firstEmpty : 0);
})();
