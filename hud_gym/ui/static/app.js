// hud-gym ui: one page, hash routes, data from /api/ as JSON. Every string from the store goes
// into the DOM as text (textContent), never as HTML: a hostile prompt or reply stays text.
"use strict";

const main = () => document.getElementById("main");
const state = { version: null, route: null, sort: {}, filters: {}, step: {}, follow: {}, playing: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "class") node.className = v;
    else if (k === "style") Object.assign(node.style, v); // CSSOM: allowed by the CSP, unlike a style attribute
    else node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// An absent reward (a failed run) is "—", never 0.
const num = (v, digits = 3) => (v === null || v === undefined ? "—" : Number(v).toFixed(digits).replace(/\.?0+$/, "") || "0");
const pct = (v) => (v === null || v === undefined ? "—" : `${Math.round(v * 1000) / 10}%`);
const when = (iso) => (iso ? iso.replace("T", " ").slice(0, 19) : "—");
const FAILED = ["env_error", "timeout", "eval_error", "policy_error", "interrupted"];
const statusClass = (s) => (FAILED.includes(s) ? "err" : s === "running" ? "muted" : "");
const link = (href, text) => el("a", { href }, text);

async function api(path) {
  const response = await fetch(path, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  return response.json();
}

// ------------------------------------------------------------------ sortable, filterable tables

function table(key, columns, rows, options = {}) {
  // columns: [{key, label, num, render(row) -> node|string, value(row) -> sortable}]
  const sort = state.sort[key] || options.sort || null;
  const filter = state.filters[key] || {};
  let shown = rows.filter((row) =>
    Object.entries(filter).every(([field, wanted]) => {
      if (!wanted) return true;
      if (field === "_text") return JSON.stringify(row).toLowerCase().includes(wanted.toLowerCase());
      return String(row[field] ?? "") === wanted;
    }),
  );
  if (sort) {
    const column = columns.find((c) => c.key === sort.key);
    const value = column && column.value ? column.value : (row) => row[sort.key];
    shown = [...shown].sort((a, b) => {
      const va = value(a), vb = value(b);
      if (va === vb) return 0;
      if (va === null || va === undefined) return 1; // absent values last in both directions
      if (vb === null || vb === undefined) return -1;
      return (va < vb ? -1 : 1) * (sort.dir === "desc" ? -1 : 1);
    });
  }
  const head = el("tr", {}, columns.map((c) =>
    el("th", {
      class: [c.num ? "num" : "", sort && sort.key === c.key ? `sorted-${sort.dir}` : ""].join(" ").trim() || null,
      "data-key": c.key,
      onclick: () => {
        const dir = sort && sort.key === c.key && sort.dir === "asc" ? "desc" : "asc";
        state.sort[key] = { key: c.key, dir };
        rerender();
      },
    }, c.label)));
  const body = shown.map((row) => el("tr", { "data-id": row.id ?? row.task_id ?? row.group_id ?? "" },
    columns.map((c) => el("td", { class: c.num ? "num" : null }, c.render ? c.render(row) : String(row[c.key] ?? "—")))));
  const filters = el("div", { class: "filters" },
    el("input", {
      type: "search", placeholder: "filter text", value: filter._text || "", "data-filter": `${key}:_text`,
      // Kept in the state as it is typed, so a live refresh that redraws the table keeps it.
      oninput: (e) => { state.filters[key] = { ...(state.filters[key] || {}), _text: e.target.value }; },
      onchange: (e) => { state.filters[key] = { ...(state.filters[key] || {}), _text: e.target.value }; rerender(); },
    }),
    (options.selects || []).map((field) => {
      const values = [...new Set(rows.map((r) => String(r[field] ?? "")))].sort();
      return el("select", {
        "data-filter": `${key}:${field}`,
        onchange: (e) => { state.filters[key] = { ...filter, [field]: e.target.value }; rerender(); },
      }, el("option", { value: "" }, `${field}: all`), values.map((v) => {
        const option = el("option", { value: v }, v || "(none)");
        if (filter[field] === v) option.selected = true;
        return option;
      }));
    }),
    el("span", { class: "muted" }, `${shown.length} of ${rows.length}`));
  return el("div", { class: "table", "data-table": key }, filters, el("table", {}, el("thead", {}, head), el("tbody", {}, body)));
}

const tagsText = (tags) => Object.entries(tags || {}).map(([k, v]) => (v ? `${k}=${v}` : k)).join(" ");

// ------------------------------------------------------------------ pages

async function jobsPage() {
  const jobs = await api("/api/jobs");
  const picked = state.picked || (state.picked = []);
  const compare = el("button", {
    disabled: picked.length === 2 ? null : "disabled",
    onclick: () => { location.hash = `#/compare/${picked[0]}/${picked[1]}`; },
  }, "compare the two picked jobs");
  return [
    el("h1", {}, "Jobs"),
    table("jobs", [
      { key: "pick", label: "", render: (j) => {
        const box = el("input", { type: "checkbox", onchange: (e) => {
          const i = picked.indexOf(j.id);
          if (e.target.checked && i < 0) picked.push(j.id); else if (!e.target.checked && i >= 0) picked.splice(i, 1);
          while (picked.length > 2) picked.shift();
          rerender();
        } });
        box.checked = picked.includes(j.id);
        return box;
      } },
      { key: "name", label: "name", render: (j) => link(`#/job/${j.id}`, j.name) },
      { key: "agent", label: "agent", render: (j) => j.agent || "—" },
      { key: "taskset", label: "task set", render: (j) => j.taskset || "—" },
      { key: "tags_text", label: "tags", render: (j) => el("span", { class: "tags" }, j.tags_text) },
      { key: "created_at", label: "created", render: (j) => when(j.created_at) },
      { key: "status", label: "status", render: (j) => el("span", { class: statusClass(j.status) }, j.status) },
      { key: "runs", label: "runs", num: true },
      { key: "success_rate", label: "success", num: true, render: (j) => pct(j.success_rate) },
      { key: "mean_reward", label: "mean reward", num: true, render: (j) => num(j.mean_reward) },
      { key: "errors", label: "errors", num: true, render: (j) => el("span", { class: j.errors ? "err" : "" }, String(j.errors)) },
    ], jobs.map((j) => ({ ...j, tags_text: tagsText(j.tags) })), { sort: { key: "created_at", dir: "desc" }, selects: ["status", "agent", "taskset"] }),
    compare,
  ];
}

async function jobPage(id, query) {
  const data = await api(`/api/jobs/${encodeURIComponent(id)}`);
  const task = query.get("task");
  if (task !== null && state.taskLink !== `${id}/${task}`) {
    state.taskLink = `${id}/${task}`; // a task row's link: show that task's runs
    state.filters.runs = { ...(state.filters.runs || {}), task_id: task };
  }
  const a = data.analytics;
  const rewards = data.runs.filter((r) => r.reward !== null && !FAILED.includes(r.status) && r.status !== "running").map((r) => r.reward);
  const bins = 10, lo = Math.min(0, ...rewards), hi = Math.max(1, ...rewards);
  const hist = new Array(bins).fill(0);
  for (const r of rewards) hist[Math.min(bins - 1, Math.floor(((r - lo) / (hi - lo || 1)) * bins))] += 1;
  const groups = a.per_group.map((g) => ({ ...g, id: g.group_id, runs: g.rewards.length,
    rewards_text: g.rewards.map((r) => (r === null ? "error" : num(r))).join(", ") }));
  const st = data.settings;
  const settings = [["agent", st.agent], ["task set", st.taskset], ["seed", st.seed], ["group size", st.group_size],
    ["max steps", st.max_steps], ["env kwargs", Object.keys(st.env_kwargs).length ? JSON.stringify(st.env_kwargs) : "(defaults)"],
    ["tags", tagsText(st.tags) || "(none)"]];
  const ranges = hist.map((_, i) => `${num(lo + ((hi - lo) * i) / bins, 2)}–${num(lo + ((hi - lo) * (i + 1)) / bins, 2)}`);
  return [
    el("h1", {}, data.job.name, " ", el("span", { class: `muted ${statusClass(data.job.status)}` }, `(${data.job.status})`)),
    data.job.error ? el("pre", { class: "err" }, data.job.error) : null,
    el("dl", { class: "settings", id: "settings", "data-job": id }, settings.map(([k, v]) =>
      el("div", { "data-setting": k }, el("dt", {}, k), el("dd", {}, v === null || v === undefined ? "—" : String(v))))),
    el("div", { class: "cards" },
      [["runs", a.trajectories], ["running", a.running], ["success", pct(a.success_rate)], ["mean reward", num(a.mean_reward)],
       ["errors", a.errors], ["steps", a.steps_total], ["created", when(data.job.created_at)]].map(([k, v]) =>
        el("div", { class: "card" }, el("b", {}, String(v)), k))),
    el("h2", {}, "Reward histogram (graded runs)"),
    chart({ id: "histogram", kind: "bar", labels: ranges, series: [{ name: "runs", values: rewards.length ? hist : [] }],
      format: (v) => String(Math.round(v * 100) / 100), xTitle: "reward", yTitle: "runs", empty: "no graded run yet: no reward to plot" }),
    el("h2", {}, "Success per task"),
    chart({ id: "success", kind: "bar", labels: a.per_task.map((t) => t.task_id || "(no id)"),
      series: [{ name: "success", values: a.per_task.map((t) => t.success_rate) }], yMax: 1, format: pct,
      xTitle: "task", yTitle: "success", empty: "no graded run yet: no success rate to plot" }),
    el("h2", {}, "Per task"),
    table("tasks", [
      { key: "task_id", label: "task", render: (t) => link(`#/job/${id}?task=${encodeURIComponent(t.task_id || "")}`, t.task_id || "(no id)") },
      { key: "runs", label: "runs", num: true }, { key: "scored", label: "graded", num: true },
      { key: "successes", label: "solved", num: true }, { key: "errors", label: "errors", num: true },
      { key: "success_rate", label: "success", num: true, render: (t) => pct(t.success_rate) },
      { key: "mean_reward", label: "mean reward", num: true, render: (t) => num(t.mean_reward) },
      { key: "mean_steps", label: "mean steps", num: true, render: (t) => num(t.mean_steps, 1) },
    ], a.per_task.map((t) => ({ ...t, id: t.task_id }))),
    el("h2", {}, "Per group"),
    table("groups", [
      { key: "group_id", label: "group", render: (g) => link(`#/group/${g.group_id}`, g.group_id.slice(0, 8)) },
      { key: "task_id", label: "task" }, { key: "seed", label: "seed", num: true },
      { key: "rewards_text", label: "rewards" }, { key: "mean", label: "mean", num: true, render: (g) => num(g.mean) },
      { key: "std", label: "std", num: true, render: (g) => num(g.std) },
      { key: "successes", label: "solved", num: true, render: (g) => `${g.successes}/${g.runs}` },
    ], groups, { selects: ["task_id", "seed"] }),
    el("h2", {}, "Runs"),
    table("runs", [
      { key: "id", label: "run", render: (r) => link(`#/run/${r.id}`, r.id.slice(0, 8)) },
      { key: "task_id", label: "task" },
      { key: "group_id", label: "group", render: (r) => (r.group_id ? link(`#/group/${r.group_id}`, r.group_id.slice(0, 8)) : "—") },
      { key: "seed", label: "seed", num: true },
      { key: "status", label: "status", render: (r) => el("span", { class: statusClass(r.status) }, r.status) },
      { key: "reward", label: "reward", num: true, render: (r) => num(r.reward) },
      { key: "steps", label: "steps", num: true },
      { key: "error", label: "error", render: (r) => el("span", { class: "err" }, r.error || "") },
    ], data.runs, { selects: ["task_id", "group_id", "seed", "status"] }),
  ];
}

// ------------------------------------------------------------------ the action overlay

function drawActions(canvas, img, actions) {
  const w = img.naturalWidth, h = img.naturalHeight;
  if (!w || !h) return;
  canvas.width = w; canvas.height = h;
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, w, h);
  const r = Math.max(4, Math.round(Math.min(w, h) / 60));
  ctx.lineWidth = Math.max(2, r / 3);
  const dot = (p, color) => {
    ctx.fillStyle = color; ctx.beginPath(); ctx.arc(p.x, p.y, r, 0, 2 * Math.PI); ctx.fill();
    ctx.strokeStyle = "#ffffff"; ctx.beginPath(); ctx.arc(p.x, p.y, r + ctx.lineWidth, 0, 2 * Math.PI); ctx.stroke();
  };
  const arrow = (from, to, color) => {
    ctx.strokeStyle = color; ctx.fillStyle = color;
    ctx.beginPath(); ctx.moveTo(from.x, from.y); ctx.lineTo(to.x, to.y); ctx.stroke();
    const angle = Math.atan2(to.y - from.y, to.x - from.x);
    ctx.beginPath(); ctx.moveTo(to.x, to.y);
    ctx.lineTo(to.x - 2 * r * Math.cos(angle - 0.4), to.y - 2 * r * Math.sin(angle - 0.4));
    ctx.lineTo(to.x - 2 * r * Math.cos(angle + 0.4), to.y - 2 * r * Math.sin(angle + 0.4));
    ctx.fill();
  };
  for (const a of actions || []) {
    if (a.type === "click" && a.point) {
      const color = a.button === "right" ? "#0057ff" : a.button === "middle" ? "#ff9800" : "#ff0000";
      dot(a.point, color);
      ctx.fillStyle = color; ctx.font = `${2 * r}px sans-serif`;
      ctx.fillText(a.button && a.button !== "left" ? a.button : "", a.point.x + 2 * r, a.point.y - r);
    } else if (a.type === "drag" && a.path && a.path.length) {
      ctx.strokeStyle = "#ff00ff"; ctx.beginPath(); ctx.moveTo(a.path[0].x, a.path[0].y);
      for (const p of a.path.slice(1)) ctx.lineTo(p.x, p.y);
      ctx.stroke();
      if (a.path.length > 1) arrow(a.path[a.path.length - 2], a.path[a.path.length - 1], "#ff00ff");
      dot(a.path[0], "#ff00ff");
    } else if (a.type === "scroll") {
      const p = a.point || { x: w / 2, y: h / 2 }, s = a.scroll || { x: 0, y: 0 };
      const len = Math.hypot(s.x, s.y) || 1, reach = Math.min(w, h) / 5;
      arrow(p, { x: p.x + (s.x / len) * reach, y: p.y + (s.y / len) * reach }, "#00a040");
    } else if (a.type === "move" && a.point) {
      ctx.strokeStyle = "#ff0000"; ctx.beginPath(); ctx.arc(a.point.x, a.point.y, r, 0, 2 * Math.PI); ctx.stroke();
    }
  }
}

function drawElements(ctx, elements, w, h) {
  const line = Math.max(1, Math.round(Math.min(w, h) / 300));
  ctx.lineWidth = line; ctx.font = `${Math.max(8, 4 * line + 6)}px sans-serif`;
  (elements || []).forEach((e, i) => {
    const [x, y, bw, bh] = e.bbox.map(Math.round);
    ctx.strokeStyle = "rgba(0, 120, 255, 0.9)"; ctx.strokeRect(x + line / 2, y + line / 2, Math.max(0, bw - line), Math.max(0, bh - line));
    const tag = String(e.mark ?? e.ref ?? i);
    ctx.fillStyle = "rgba(0, 120, 255, 0.9)"; ctx.fillRect(x, y, ctx.measureText(tag).width + 4, 4 * line + 8);
    ctx.fillStyle = "#ffffff"; ctx.fillText(tag, x + 2, y + 4 * line + 5);
  });
}

// A frame with its overlay: the action (on the frame the agent saw) and the element boxes.
function frame(src, actions, label, elements) {
  if (!src) return el("div", { class: "muted frame-missing" }, `${label}: no frame stored`);
  const img = el("img", { src, alt: label });
  const shown = state.showElements !== false ? elements : null;
  const canvas = actions || (shown && shown.length) ? el("canvas", {}) : null;
  const draw = () => {
    fitFrames();
    if (!canvas || !img.naturalWidth) return;
    drawActions(canvas, img, actions || []);
    if (shown) drawElements(canvas.getContext("2d"), shown, img.naturalWidth, img.naturalHeight);
  };
  img.addEventListener("load", draw);
  if (img.complete) setTimeout(draw, 0);
  return el("div", { class: "frame" }, el("div", { class: "muted frame-label" }, label), el("div", { class: "stage" }, img, canvas));
}

// The player's frames fit the viewport: an integer zoom (crisp pixels) when the frame is smaller
// than the room it has, a plain fit below 1x; the zoom control picks a fixed zoom instead.
function fitFrames() {
  const imgs = [...document.querySelectorAll(".player .stage img")].filter((i) => i.naturalWidth);
  if (!imgs.length) return;
  const player = document.querySelector(".player");
  const w = Math.max(...imgs.map((i) => i.naturalWidth)), h = Math.max(...imgs.map((i) => i.naturalHeight));
  const roomW = (player.clientWidth - 12 * (imgs.length - 1)) / imgs.length - 2;
  const top = imgs[0].getBoundingClientRect().top + window.scrollY;
  const roomH = Math.max(80, window.innerHeight - top - 10);
  const fit = Math.min(roomW / w, roomH / h);
  const zoom = state.zoom && state.zoom !== "fit" ? Number(state.zoom) : fit >= 1 ? Math.floor(fit) : fit;
  for (const img of imgs) {
    img.style.width = `${Math.round(img.naturalWidth * zoom)}px`;
    img.style.height = `${Math.round(img.naturalHeight * zoom)}px`;
    img.parentElement.classList.toggle("crisp", Number.isInteger(zoom) && zoom > 1);
  }
  player.dataset.zoom = String(Math.round(zoom * 1000) / 1000);
  const label = document.getElementById("zoom-label");
  if (label) label.textContent = Number.isInteger(zoom) ? `${zoom}x` : `${Math.round(zoom * 100)}%`;
}
window.addEventListener("resize", () => fitFrames());

// ------------------------------------------------------------------ a run: the step player

function stopPlaying() {
  if (state.playing) { clearInterval(state.playing); state.playing = null; }
}

function playerControls(id, n, i, go) {
  const fps = el("select", { id: "fps", title: "playback speed" }, [1, 2, 5, 10].map((f) => el("option", { value: f }, `${f} fps`)));
  fps.value = String(state.fps || 2);
  fps.onchange = () => { state.fps = Number(fps.value); };
  const play = el("button", { id: "play", onclick: () => {
    if (state.playing) { stopPlaying(); rerender(); return; }
    state.playing = setInterval(() => {
      if ((state.step[id] ?? 0) >= n - 1) { stopPlaying(); rerender(); return; }
      state.step[id] = (state.step[id] ?? 0) + 1; rerender();
    }, 1000 / (state.fps || 2));
    rerender();
  } }, state.playing ? "pause" : "play");
  const zoom = el("select", { id: "zoom", title: "frame zoom", onchange: (e) => { state.zoom = e.target.value; fitFrames(); } },
    ["fit", "1", "2", "3", "4", "6", "8"].map((z) => el("option", { value: z }, z === "fit" ? "zoom: fit" : `zoom: ${z}x`)));
  zoom.value = String(state.zoom || "fit");
  const boxes = el("input", { type: "checkbox", id: "show-elements", onchange: (e) => { state.showElements = e.target.checked; rerender(); } });
  boxes.checked = state.showElements !== false;
  return el("div", { class: "controls" },
    el("button", { onclick: () => go(i - 1), title: "previous step (←)" }, "◀"),
    el("input", { type: "range", id: "scrubber", min: 0, max: n - 1, value: i, oninput: (e) => go(Number(e.target.value)) }),
    el("button", { onclick: () => go(i + 1), title: "next step (→)" }, "▶"),
    el("span", { id: "step-label" }, `step ${i + 1} / ${n}`), play, fps, zoom, el("span", { id: "zoom-label", class: "muted" }),
    el("label", { class: "muted" }, boxes, " elements"));
}

async function runPage(id, follow, envId) {
  const run = envId ? await api(`/api/live/env/${encodeURIComponent(envId)}`) : await api(`/api/runs/${encodeURIComponent(id)}`);
  id = run.id;
  const n = run.steps.length;
  if (follow || state.follow[id]) state.step[id] = Math.max(0, n - 1);
  const i = Math.min(state.step[id] ?? 0, Math.max(0, n - 1));
  state.step[id] = i;
  const go = (k) => { state.step[id] = Math.max(0, Math.min(n - 1, k)); state.follow[id] = false; rerender(); };
  document.onkeydown = (e) => {
    if (e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName) && e.target.type !== "range") return;
    if (e.key === "ArrowRight") { e.preventDefault(); go((state.step[id] ?? 0) + 1); }
    if (e.key === "ArrowLeft") { e.preventDefault(); go((state.step[id] ?? 0) - 1); }
  };
  const step = run.steps[i];
  const header = [
    el("h1", {}, `Run ${run.id.slice(0, 8)} · `, run.task_id || "(no task id)", " · ",
      el("span", { class: statusClass(run.status), id: "run-status" }, run.status), " · ",
      el("span", { class: "muted" }, "final grade "), el("span", { id: "run-reward", title: "the run's reward (its final grade)" }, num(run.reward))),
    envId ? el("p", { class: "following", id: "following" }, `following env ${envId.slice(0, 8)}: its newest episode, updated as it resets and steps`) : null,
    el("p", {}, link(`#/job/${run.job_id}`, "job"), run.group_id ? [" · ", link(`#/group/${run.group_id}`, `group (run ${run.rollout_index})`)] : null,
      ` · seed ${run.seed ?? "—"}`, run.status === "running" && !envId ? [" · ", link(`#/live/${run.id}`, "follow live")] : null),
    el("pre", { id: "prompt", class: "prompt" }, run.prompt),
    run.error ? el("pre", { class: "err" }, run.error) : null,
  ];
  if (!n) return [...header, el("p", { class: "muted" }, "no step yet"), el("div", { class: "player" }, frame(run.initial_frame, null, "reset frame", run.initial_elements))];
  return [
    ...header,
    playerControls(id, n, i, go),
    el("div", { class: "stepbar" },
      el("div", { class: "caption", id: "caption", title: "the step's action" }, step.caption),
      [["step reward", num(step.reward), "step-reward"], ["status", step.status, "step-status"],
       ["ended", step.terminated ? "terminated" : step.truncated ? "truncated" : "no", "step-ended"]].map(([k, v, key]) =>
        el("div", { class: "card" }, el("b", { id: key, class: k === "status" ? statusClass(String(v)) : "" }, String(v)), k))),
    step.error ? el("pre", { class: "err" }, step.error) : null,
    el("div", { class: "player" },
      el("div", { id: "before" }, frame(step.frame_before, step.actions, "the frame the agent saw, with its action", step.elements_before)),
      el("div", { id: "after" }, frame(step.frame_after, null, "the frame after", step.elements_after))),
    el("h2", {}, "Action (CLA JSON)"), el("pre", { id: "actions" }, JSON.stringify(step.actions, null, 1)),
    el("h2", {}, "Text observation"), el("pre", { id: "text" }, step.text || "(none)"),
    el("h2", {}, "info"), el("pre", {}, JSON.stringify(step.info, null, 1)),
    el("h2", {}, "Timings"), el("pre", {}, JSON.stringify(step.timings, null, 1)),
    el("h2", {}, "Policy trace"), el("pre", { id: "trace" }, step.policy_trace === null ? "(none)" : JSON.stringify(step.policy_trace, null, 1)),
    run.grade ? [el("h2", {}, "Final grade (the run's, after its last step)"), el("pre", { id: "grade" }, JSON.stringify(run.grade, null, 1))] : null,
    run.final_response !== null ? [el("h2", {}, "Final response"), el("pre", {}, run.final_response)] : null,
  ];
}

async function groupPage(id) {
  const g = await api(`/api/groups/${encodeURIComponent(id)}`);
  return [
    el("h1", {}, `Group ${id.slice(0, 8)} · `, g.task_id || "(no task id)", ` · seed ${g.seed ?? "—"}`),
    el("p", {}, link(`#/job/${g.job_id}`, "job"), " · advantages: (r − mean) / (std + 1e-6) over the graded runs; a run with no reward gets none"),
    el("pre", {}, g.prompt),
    el("div", { class: "side" }, g.runs.map((run) => el("div", { class: "col", "data-run": run.id },
      el("h2", {}, link(`#/run/${run.id}`, `run ${run.rollout_index}`), " · ",
        el("span", { class: statusClass(run.status) }, run.status)),
      el("div", {}, "reward ", el("b", { class: "reward" }, num(run.reward)), " · advantage ",
        el("b", { class: "advantage" }, num(run.advantage))),
      [...Array(g.max_steps).keys()].map((k) => {
        const s = run.steps[k];
        if (!s) return el("div", { class: "muted" }, `step ${k + 1}: —`);
        return el("div", {}, el("div", { class: "muted" }, `step ${k + 1}: ${s.caption} · reward ${num(s.reward)}`),
          frame(s.frame_before, s.actions, ""));
      })))),
  ];
}

async function comparePage(a, b) {
  const c = await api(`/api/compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}`);
  const diff = (v, f) => el("span", { class: v === null ? "muted" : v > 0 ? "ok" : v < 0 ? "bad" : "" }, v === null ? "—" : (v > 0 ? "+" : "") + f(v));
  return [
    el("h1", {}, "Compare ", link(`#/job/${a}`, c.summary.a.name), " and ", link(`#/job/${b}`, c.summary.b.name)),
    table("compare", [
      { key: "task_id", label: "task" },
      { key: "sa", label: "success A", num: true, value: (r) => r.a?.success_rate, render: (r) => pct(r.a?.success_rate ?? null) },
      { key: "sb", label: "success B", num: true, value: (r) => r.b?.success_rate, render: (r) => pct(r.b?.success_rate ?? null) },
      { key: "success_rate_diff", label: "Δ success", num: true, render: (r) => diff(r.success_rate_diff, pct) },
      { key: "ma", label: "reward A", num: true, value: (r) => r.a?.mean_reward, render: (r) => num(r.a?.mean_reward ?? null) },
      { key: "mb", label: "reward B", num: true, value: (r) => r.b?.mean_reward, render: (r) => num(r.b?.mean_reward ?? null) },
      { key: "mean_reward_diff", label: "Δ reward", num: true, render: (r) => diff(r.mean_reward_diff, (v) => num(v)) },
    ], c.tasks.map((t) => ({ ...t, id: t.task_id }))),
  ];
}

async function curvesPage(query) {
  const c = await api(`/api/curves?key=${encodeURIComponent(query.get("key") || "")}`);
  const keys = el("select", { id: "curve-key", onchange: (e) => { location.hash = `#/curves?key=${encodeURIComponent(e.target.value)}`; } },
    c.keys.map((k) => el("option", { value: k }, k)));
  keys.value = c.key;
  const head = [el("h1", {}, "Learning curves across tagged jobs"),
    el("p", { class: "muted" }, "Tag the jobs of each checkpoint (hud-gym run … --tag ckpt=1200, or hud-gym jobs tag ID ckpt=1200); "
      + "success per task set is plotted in the order of the tag's values. Failed runs are left out of success, never counted 0.")];
  if (!c.keys.length) return [...head, el("div", { class: "chart-empty", "data-chart": "curves" }, "no tagged job yet: tag jobs to plot their success across the tag's values")];
  const values = [...new Set(c.points.map((p) => p.value))];
  const tasksets = [...new Set(c.points.map((p) => p.taskset || "(tasks)"))].sort();
  const at = (rows, v, pick) => { const hit = rows.filter((p) => p.value === v).map(pick).filter((x) => x !== null && x !== undefined);
    return hit.length ? hit.reduce((a, b) => a + b, 0) / hit.length : null; };
  const perSet = tasksets.map((ts) => ({ name: ts, values: values.map((v) => at(c.points.filter((p) => (p.taskset || "(tasks)") === ts), v, (p) => p.success_rate)) }));
  const sections = tasksets.map((ts) => {
    const rows = c.points.filter((p) => (p.taskset || "(tasks)") === ts);
    const tasks = [...new Set(rows.flatMap((p) => Object.keys(p.per_task)))].sort();
    return [el("h2", {}, `${ts}: success per task`),
      chart({ id: `tasks-${ts}`, kind: "line", labels: values, series: tasks.map((t) => ({ name: t, values: values.map((v) => at(rows, v, (p) => p.per_task[t] ?? null)) })),
        yMax: 1, format: pct, xTitle: c.key, yTitle: "success", empty: "no graded run in these jobs" })];
  });
  return [...head, el("p", {}, el("label", {}, "tag ", keys)),
    el("h2", {}, "Success per task set"),
    chart({ id: "curves", kind: "line", labels: values, series: perSet, yMax: 1, format: pct, xTitle: c.key, yTitle: "success", empty: "no graded run in these jobs" }),
    sections,
    el("h2", {}, "Jobs"),
    table("curve-jobs", [
      { key: "value", label: c.key }, { key: "name", label: "job", render: (p) => link(`#/job/${p.job_id}`, p.name) },
      { key: "taskset", label: "task set", render: (p) => p.taskset || "—" }, { key: "runs", label: "runs", num: true },
      { key: "errors", label: "errors", num: true }, { key: "success_rate", label: "success", num: true, render: (p) => pct(p.success_rate) },
      { key: "mean_reward", label: "mean reward", num: true, render: (p) => num(p.mean_reward) },
    ], c.points.map((p) => ({ ...p, id: p.job_id })))];
}

async function livePage() {
  const runs = await api("/api/live");
  return [
    el("h1", {}, "Runs in progress"),
    runs.length ? table("live", [
      { key: "id", label: "run", render: (r) => link(`#/live/${r.id}`, r.id.slice(0, 8)) },
      { key: "job_id", label: "job", render: (r) => link(`#/job/${r.job_id}`, r.job_id.slice(0, 8)) },
      { key: "task_id", label: "task" }, { key: "started_at", label: "started", render: (r) => when(r.started_at) },
      { key: "last_step", label: "steps", num: true, render: (r) => (r.last_step === null ? "0" : String(r.last_step + 1)) },
    ], runs) : el("p", { class: "muted" }, "nothing is running; this page updates by itself"),
  ];
}

// ------------------------------------------------------------------ routing and live updates

function route() {
  const [path, search] = location.hash.replace(/^#/, "").split("?");
  const query = new URLSearchParams(search || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "job" && parts[1]) return () => jobPage(parts[1], query);
  if (parts[0] === "run" && parts[1]) return () => runPage(parts[1], false);
  if (parts[0] === "live" && parts[1] === "env" && parts[2]) return () => runPage(null, true, parts[2]);
  if (parts[0] === "live" && parts[1]) return () => runPage(parts[1], true);
  if (parts[0] === "curves") return () => curvesPage(query);
  if (parts[0] === "live") return livePage;
  if (parts[0] === "group" && parts[1]) return () => groupPage(parts[1]);
  if (parts[0] === "compare" && parts[2]) return () => comparePage(parts[1], parts[2]);
  return jobsPage;
}

let rendering = Promise.resolve();
function rerender() {
  rendering = rendering.then(async () => {
    try {
      const nodes = await route()();
      const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.filter : null;
      main().replaceChildren(...[nodes].flat(3).filter((n) => n !== null && n !== undefined));
      fitFrames();
      if (focused) { const f = document.querySelector(`[data-filter="${focused}"]`); if (f) f.focus(); }
      document.body.dataset.rendered = String(Date.now());
    } catch (error) {
      main().replaceChildren(el("p", { class: "err" }, String(error.message || error)));
    }
  });
  return rendering;
}

async function poll() {
  try {
    const version = await api("/api/version");
    document.getElementById("live-dot").className = "on";
    document.getElementById("live-label").textContent = "live";
    if (state.version !== null && version !== state.version) await rerender();
    state.version = version;
  } catch (error) {
    document.getElementById("live-dot").className = "";
    document.getElementById("live-label").textContent = "offline";
  }
  setTimeout(poll, 1000);
}

window.addEventListener("hashchange", () => { stopPlaying(); document.onkeydown = null; rerender(); });
rerender().then(poll);
