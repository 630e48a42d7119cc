// The grading-by-question page's script (templates/question.html): marks are saved one after another, each from
// the answer's state as the server last returned it, so two quick keys on one answer both land.
"use strict";
const cell = JSON.parse(document.getElementById("cell").textContent);
const xsrf = document.querySelector("meta[name=a3-xsrf]").content;
const known = {};  // pseudonym -> the answer's state as the server last returned it
const message = document.getElementById("message");

async function post(path, body) {
  const r = await fetch(path, {method: "POST", credentials: "same-origin",
                               headers: {"Content-Type": "application/json", "X-XSRFToken": xsrf},
                               body: JSON.stringify(body)});
  let reply;
  try { reply = await r.json(); } catch (e) { reply = {error: `the server answered ${r.status} ${r.statusText}`}; }
  return [r.status, reply];
}
function card(student) { return document.querySelector(`.answer[data-student="${CSS.escape(student)}"]`); }
function show(state) {
  if (state.graded !== undefined) document.getElementById("graded").textContent = `graded ${state.graded} of ${state.total}`;
  for (const [student, a] of Object.entries(state.answers)) {
    known[student] = a;
    const el = card(student);
    if (!el) continue;
    el.dataset.version = a.version;
    el.querySelector(".score").textContent = (a.score === null ? "to grade" : a.score) + " / " + cell.points;
    el.querySelectorAll("input.item").forEach(box => { box.checked = a.items.includes(box.value); });
    const adj = el.querySelector("input.adj"), comment = el.querySelector("input.comment");
    // a box being typed in, or typed in and not saved yet, keeps what the TA typed
    if (document.activeElement !== adj && !adj.dataset.dirty) adj.value = a.adjustment ? a.adjustment : "";
    if (document.activeElement !== comment && !comment.dataset.dirty) comment.value = a.comment;
  }
}

// one save at a time: each waits for the one before and reads the answer's version and items when its turn comes
let queue = Promise.resolve();
function enqueue(work) { queue = queue.then(work).catch(e => { message.textContent = `not saved: ${e}`; }); return queue; }
function change(el, items) {  // read when its turn to be saved comes: what the boxes hold then is sent
  el.querySelectorAll("input.adj, input.comment").forEach(box => { delete box.dataset.dirty; });
  const adj = el.querySelector("input.adj").value.trim().replace(",", ".");
  return {student: el.dataset.student, version: known[el.dataset.student].version, items: items,
          adjustment: adj === "" ? 0 : Number(adj), comment: el.querySelector("input.comment").value};
}
async function save(changes) {
  if (changes.some(c => !Number.isFinite(c.adjustment))) {
    message.textContent = "not saved: the adjustment should be a number of points, such as -0.25";
    return;
  }
  const [status, body] = await post("/api/mark", {notebook: cell.notebook, grade_id: cell.grade_id, marks: changes});
  if (status === 200) { message.textContent = ""; show(body); refreshSuggestions(); return; }
  message.textContent = body.error;
  if (body.now) show({answers: body.now});
}
function itemsOf(el) { return known[el.dataset.student].items; }
function toggled(items, item) { return items.includes(item) ? items.filter(i => i !== item) : [...items, item]; }
function toggle(el, item) { return enqueue(() => save([change(el, toggled(itemsOf(el), item))])); }
function memberChange(student, items) {  // an answer of the group that may not be drawn yet: its own adjustment and comment
  const el = card(student);
  if (el) return change(el, items);
  const a = known[student];
  return {student: student, version: a.version, items: items, adjustment: a.adjustment, comment: a.comment};
}
function toggleGroup(group, item) {  // every member of the group, drawn on the page or not
  return enqueue(() => {
    const members = cell.members[group.dataset.group] || [];
    const on = !members.every(s => known[s].items.includes(item));
    return save(members.map(s => memberChange(s, on ? [...new Set([...known[s].items, item])]
                                                       : known[s].items.filter(i => i !== item))));
  });
}
async function more(button) {  // the next answers, drawn where the button was
  const url = `/q/${encodeURIComponent(cell.notebook)}/${encodeURIComponent(cell.grade_id)}/more` +
              `?from=${button.dataset.from}&names=${cell.names ? 1 : 0}`;
  const r = await fetch(url, {credentials: "same-origin"});
  if (!r.ok) { message.textContent = `the next answers did not load (${r.status})`; return; }
  const box = document.createElement("div");
  box.innerHTML = await r.text();  // the server's own template: escaped text only
  button.replaceWith(...box.childNodes);
  show({answers: known});
  showSuggestions();
}
function nothing(el) {  // "no items, 0 points"
  el.querySelector("input.adj").value = "0";
  return enqueue(() => save([change(el, [])]));
}
function reloadOr(status, body) { if (status === 200) location.reload(); else message.textContent = body.error; }

document.addEventListener("input", e => {
  if (e.target.matches && e.target.matches("input.adj, input.comment")) e.target.dataset.dirty = "1";
});
document.addEventListener("change", e => {
  const el = e.target.closest(".answer");
  if (!el) return;
  if (e.target.matches("select.move")) {
    post("/api/move", {notebook: cell.notebook, grade_id: cell.grade_id, student: el.dataset.student, group: e.target.value})
      .then(([status, body]) => reloadOr(status, body));
    return;
  }
  if (e.target.matches("input.item")) { toggle(el, e.target.value); return; }
  if (e.target.matches("input.adj, input.comment")) enqueue(() => save([change(el, itemsOf(el))]));
});
document.addEventListener("click", e => {
  const next = e.target.closest("button.more");
  if (next) more(next);
  const b = e.target.closest("button.group-item");
  if (b) toggleGroup(b.closest(".group"), b.dataset.item);
  const move = e.target.closest("button.move");
  if (move) {  // the menu is built when opened: a class of 2,000 would otherwise carry every group in every card
    const menu = document.createElement("select");
    menu.className = "move";
    menu.setAttribute("aria-label", "move this answer to another group");
    const here = move.closest(".group").dataset.group;
    menu.add(new Option("move to group…", "", true, true));
    menu.options[0].disabled = true;
    for (const name of cell.groups) if (name !== here) menu.add(new Option(name, name));
    menu.add(new Option("a new group of its own", ""));
    move.replaceWith(menu);
    menu.focus();
  }
  const resolve = e.target.closest("button.resolve");
  if (resolve) {
    const el = resolve.closest(".answer");
    post("/api/regrade", {notebook: cell.notebook, grade_id: cell.grade_id, student: el.dataset.student,
                          why: el.querySelector("input.why").value}).then(([status, body]) => reloadOr(status, body));
  }
  const edit = e.target.closest("button.edit-item");
  if (edit) {
    const row = edit.closest("tr");
    post("/api/item", {notebook: cell.notebook, grade_id: cell.grade_id, item: edit.dataset.item,
                       points: Number(row.querySelector("input.points").value),
                       text: row.querySelector("input.text").value}).then(([status, body]) => reloadOr(status, body));
  }
});
function typing(target) {
  return target.matches && target.matches("input:not([type=checkbox]), textarea, select, [contenteditable]");
}
document.addEventListener("keydown", e => {
  const here = document.activeElement && document.activeElement.closest ? document.activeElement.closest(".answer") : null;
  if (typing(e.target)) {  // keys belong to the text box; Enter saves (change), Escape drops what was typed
    if (e.key === "Escape" && here && e.target.matches("input.adj, input.comment")) {
      const a = known[here.dataset.student];
      e.target.value = e.target.matches("input.adj") ? (a.adjustment ? a.adjustment : "") : a.comment;
      delete e.target.dataset.dirty;
    }
    if ((e.key === "Escape" || (e.key === "Enter" && e.target.matches("input.adj, input.comment"))) && here) {
      e.target.blur();
      here.focus();
      e.preventDefault();
    }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const all = [...document.querySelectorAll(".answer")];
  if (e.key === "j" || e.key === "k") {
    const i = here ? all.indexOf(here) + (e.key === "j" ? 1 : -1) : 0;
    const go = () => { const now = [...document.querySelectorAll(".answer")];
                       if (now[i]) { now[i].focus(); now[i].scrollIntoView({block: "nearest"}); } };
    const next = document.querySelector("button.more");
    if (!all[i] && e.key === "j" && next) more(next).then(go); else go();
    e.preventDefault();
    return;
  }
  if (e.key === "n") { e.preventDefault(); gradeNext(); return; }
  if ((e.key === "a" || e.key === "A") && here) {
    e.preventDefault();
    accept(e.shiftKey ? (cell.members[here.closest(".group").dataset.group] || []) : [here.dataset.student]);
    return;
  }
  const digit = /^Digit([0-9])$/.exec(e.code);
  if (!digit || !here) return;
  e.preventDefault();
  if (digit[1] === "0") { if (!e.shiftKey) nothing(here); return; }
  const item = cell.items[parseInt(digit[1]) - 1];
  if (!item) return;
  if (e.shiftKey) toggleGroup(here.closest(".group"), item); else toggle(here, item);
});
document.addEventListener("toggle", async e => {
  const d = e.target;
  if (!d.matches || !d.matches("details.outputs") || !d.open || d.dataset.loaded) return;
  const who = d.closest(".answer").dataset.student;
  const r = await fetch(`/outputs/${encodeURIComponent(cell.notebook)}/${encodeURIComponent(cell.grade_id)}/${encodeURIComponent(who)}`);
  const box = document.createElement("div");
  box.innerHTML = await r.text();  // rendered by the server's template: escaped text and checked base64 images only
  d.appendChild(box);
  d.dataset.loaded = "1";
}, true);
// suggestions: learned from the marks so far (server side); shown apart from marks, counted only when accepted
let suggested = {answers: {}, next: [], rubric: null};
// made under another version of the rubric than the one this page shows (edited since it loaded): shown, never taken
function stale() { return suggested.rubric !== null && suggested.rubric !== cell.rubric; }
function showSuggestions() {
  document.querySelectorAll(".answer").forEach(el => {
    const g = suggested.answers[el.dataset.student], box = el.querySelector(".suggest");
    if (!box) return;
    box.classList.toggle("stale", stale());
    if (!g) { box.textContent = ""; return; }
    box.textContent = g.items === null ? "no suggestion (not sure enough)"
      : `suggested: ${g.items.length ? g.items.join(", ") : "no items"} (confidence ${g.confidence}` +
        (g.like ? `, like ${g.like})` : ")") +
        (stale() ? " — stale: the rubric changed since this page loaded; reload it" : " — a accepts");
  });
  document.querySelectorAll("section.group").forEach(section => {
    const sets = new Set((cell.members[section.dataset.group] || []).map(s => suggested.answers[s])
      .filter(g => g && g.items !== null).map(g => g.items.join(";")));
    section.querySelector(".differ").textContent = sets.size > 1 ? "(the suggester would mark these differently)" : "";
  });
}
let pendingSuggest = null;
function refreshSuggestions() {  // after marks arrive, at most every 300 ms
  clearTimeout(pendingSuggest);
  pendingSuggest = setTimeout(async () => {
    const r = await fetch(`/api/suggest/${encodeURIComponent(cell.notebook)}/${encodeURIComponent(cell.grade_id)}`,
                          {credentials: "same-origin"});
    if (r.ok) { suggested = await r.json(); showSuggestions(); }
  }, 300);
}
function accept(students) {
  if (stale()) { message.textContent = "the rubric changed since this page loaded: reload it to take suggestions"; return; }
  const chosen = students.filter(s => suggested.answers[s] && suggested.answers[s].items !== null);
  if (!chosen.length) { message.textContent = "no suggestion to accept here"; return; }
  return enqueue(() => save(chosen.map(s => memberChange(s, suggested.answers[s].items))));
}
async function gradeNext() {
  for (const s of suggested.next) {
    if (known[s] && known[s].score !== null) continue;
    let el = card(s);
    while (!el && document.querySelector("button.more")) { await more(document.querySelector("button.more")); el = card(s); }
    if (el) { el.focus(); el.scrollIntoView({block: "nearest"}); return; }
  }
  message.textContent = "every answer the suggester knows of is graded";
}
show(JSON.parse(document.getElementById("state").textContent));
refreshSuggestions();
if (cell.waiting) {
  const poll = setInterval(async () => {
    const r = await fetch(`/api/ready/${encodeURIComponent(cell.notebook)}/${encodeURIComponent(cell.grade_id)}`);
    if (!r.ok || !(await r.json()).ready) return;
    clearInterval(poll);
    if (document.activeElement && typing(document.activeElement)) {  // never lose what is being typed
      document.getElementById("grouping").textContent = "The groups by meaning are ready: reload the page to see them.";
    } else {
      location.reload();
    }
  }, 2000);
}
