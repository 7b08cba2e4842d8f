// labpose's labeling page. Every change is one request for one point (place, move, delete), which
// the server applies to the files on disk and answers with the frame as saved; the page never sends
// a whole table. A point is a keypoint of the project: a bodypart, and in a multi-animal project
// the individual it belongs to (picked in the individuals list). Plain JavaScript, no libraries.
"use strict";

const state = {
  project: null,        // /api/project: keypoints, individuals, colors, skeleton, dotsize, ...
  videos: [],           // /api/videos
  video: null,          // current video stem
  image: null,          // current frame's image name
  frame: null,          // /api/frame: points and machine points of the current frame, by keypoint
  bodypart: 0,          // index of the current keypoint in project.keypoints (its individual is
                        // the current individual)
  picture: null,        // the frame's Image
  scale: 1, offsetX: 0, offsetY: 0,  // screen = image * scale + offset (CSS pixels)
  drag: null,           // {kind: "point"|"pan", ...} while the mouse button is down
  undo: [], redo: [],   // {video, image, bodypart, before, after}: a keypoint's point ({x, y} or
                        // null) before and after; or {video, image, from, to}: a point given
                        // from one keypoint to another individual's same bodypart
  pending: 0,           // requests in flight
};

const $ = (id) => document.getElementById(id);
const canvas = $("canvas");
const context = canvas.getContext("2d");

function setStatus(text, kind) {
  const status = $("status");
  status.textContent = text;
  status.className = "status " + (kind || "");
}

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  const response = await fetch(path, Object.assign({credentials: "same-origin", cache: "no-store"}, options));
  const text = await response.text();
  let data = null;
  try { data = JSON.parse(text); } catch (error) { data = {error: text}; }
  if (!response.ok) {
    // The server's message names the file (and line) at fault; its hint says what to do.
    const message = (data && data.error) || response.statusText;
    const error = new Error(data && data.hint ? `${message}. ${data.hint}` : message);
    error.status = response.status;
    throw error;
  }
  return data;
}

// The first problem the server reported for a video's labels (a file it cannot read), or "".
function labelProblem(videos) {
  const video = videos.find((v) => v.problem);
  return video ? `labels of ${video.stem} not readable: ${video.problem}` : "";
}

// Sends one change; the answer is the frame as saved, which becomes the page's state.
async function change(path, body) {
  state.pending += 1;
  setStatus("saving…", "saving");
  try {
    const frame = await api(path, body);
    if (frame.video === state.video && frame.image === state.image) state.frame = frame;
    updateCounts(frame);
    setStatus("saved", "");
    return frame;
  } catch (error) {
    setStatus("not saved: " + error.message, "error");
    await loadFrame(state.video, state.image, false);
    throw error;
  } finally {
    state.pending -= 1;
    render();
  }
}

function pointOf(bodypart) {
  const point = state.frame && state.frame.points[bodypart];
  return point ? {x: point.x, y: point.y} : null;
}

// The fields that name a keypoint in a request (no individual in a single-animal project).
function keypointFields(index) {
  const keypoint = state.project.keypoints[index];
  if (!state.project.multi_animal) return {bodypart: keypoint.bodypart};
  return {individual: keypoint.individual, bodypart: keypoint.bodypart};
}

async function applyPoint(video, image, bodypart, point) {
  const fields = Object.assign({video, image}, keypointFields(bodypart));
  if (point) return change("/api/point", Object.assign(fields, {x: point.x, y: point.y}));
  return change("/api/delete", fields);
}

// Gives the point of keypoint `from` to keypoint `to` (the same bodypart of another individual).
async function applyMove(video, image, from, to) {
  const body = Object.assign({video, image}, keypointFields(from),
                             {to: state.project.keypoints[to].individual});
  return change("/api/individual", body);
}

// Redoes (forward) or undoes one step.
async function applyStep(step, forward) {
  if (step.from !== undefined) {
    return forward ? applyMove(step.video, step.image, step.from, step.to)
                   : applyMove(step.video, step.image, step.to, step.from);
  }
  return applyPoint(step.video, step.image, step.bodypart, forward ? step.after : step.before);
}

// A user action on one point, recorded for undo.
async function edit(bodypart, after) {
  const step = {video: state.video, image: state.image, bodypart, before: pointOf(bodypart), after};
  await applyPoint(step.video, step.image, bodypart, after);
  state.undo.push(step);
  state.redo = [];
}

async function undo() {
  const step = state.undo.pop();
  if (!step) return;
  await showFrame(step.video, step.image);
  await applyStep(step, false);
  state.redo.push(step);
}

async function redo() {
  const step = state.redo.pop();
  if (!step) return;
  await showFrame(step.video, step.image);
  await applyStep(step, true);
  state.undo.push(step);
}

// ---- frames and videos ----

function currentVideo() {
  return state.videos.find((video) => video.stem === state.video);
}

function updateCounts(frame) {
  const video = state.videos.find((v) => v.stem === frame.video);
  if (!video) return;
  const entry = video.frames.find((f) => f.image === frame.image);
  if (entry) entry.labeled = frame.points.filter((p) => p).length;
  renderFrameList();
}

async function loadVideos() {
  state.videos = (await api("/api/videos")).videos;
  const select = $("videos");
  select.replaceChildren(...state.videos.map((video) => {
    const option = document.createElement("option");
    option.value = video.stem;
    const labeled = video.frames.filter((f) => f.labeled > 0).length;
    option.textContent = `${video.stem} (${labeled}/${video.frames.length})`;
    return option;
  }));
  if (state.video) select.value = state.video;
  renderFrameList();
}

function renderFrameList() {
  const video = currentVideo();
  const list = $("frames");
  if (!video) { list.replaceChildren(); return; }
  const total = state.project.keypoints.length;
  list.replaceChildren(...video.frames.map((frame) => {
    const item = document.createElement("li");
    item.dataset.image = frame.image;
    if (frame.image === state.image) item.classList.add("current");
    if (frame.labeled === total) item.classList.add("complete");
    if (frame.machine) item.classList.add("machine");
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = frame.image;
    const count = document.createElement("span");
    count.className = "count";
    count.textContent = `${frame.labeled}/${total}`;
    item.append(name, count);
    item.addEventListener("click", () => showFrame(video.stem, frame.image));
    return item;
  }));
  const current = list.querySelector(".current");
  if (current) current.scrollIntoView({block: "nearest"});
}

async function loadFrame(video, image, fit) {
  if (!video || !image) return;
  const frame = await api(`/api/frame?video=${encodeURIComponent(video)}&image=${encodeURIComponent(image)}`);
  if (video !== state.video || image !== state.image) return;
  state.frame = frame;
  if (fit) fitView();
  render();
}

async function showFrame(video, image) {
  if (video === state.video && image === state.image) return;
  state.video = video;
  state.image = image;
  state.frame = null;
  $("videos").value = video;
  $("frame-name").textContent = `${video} / ${image}`;
  renderFrameList();
  const picture = new Image();
  const loaded = new Promise((resolve) => { picture.onload = resolve; picture.onerror = resolve; });
  picture.src = `/api/image?video=${encodeURIComponent(video)}&image=${encodeURIComponent(image)}`;
  // The image is shown even when the frame's labels cannot be read; the status line says why.
  const [, frame] = await Promise.allSettled([loaded, loadFrame(video, image, false)]);
  if (state.image !== image) return;
  state.picture = picture.naturalWidth > 0 ? picture : null;
  fitView();
  render();
  if (frame.status === "rejected") setStatus(frame.reason.message, "error");
}

async function stepFrame(delta) {
  const video = currentVideo();
  if (!video || video.frames.length === 0) return;
  const index = video.frames.findIndex((f) => f.image === state.image);
  const next = Math.min(video.frames.length - 1, Math.max(0, index + delta));
  await showFrame(video.stem, video.frames[next].image);
}

// ---- individuals and bodyparts ----

// The keypoint of `individual` and `bodypart`, or -1.
function findKeypoint(individual, bodypart) {
  return state.project.keypoints.findIndex((k) => k.individual === individual && k.bodypart === bodypart);
}

function currentIndividual() {
  return state.project.keypoints[state.bodypart].individual;
}

// The keypoints of an individual ("" in a single-animal project: all of them), by index.
function keypointsOf(individual) {
  return state.project.keypoints.map((k, index) => (k.individual === individual ? index : -1))
    .filter((index) => index >= 0);
}

function currentKeypoints() {
  return keypointsOf(currentIndividual());
}

function renderIndividuals() {
  const individuals = state.project.individuals;
  $("individuals-panel").hidden = individuals.length === 0;
  if (individuals.length === 0) return;
  const current = currentIndividual();
  $("individuals").replaceChildren(...individuals.map((name, index) => {
    const item = document.createElement("li");
    item.dataset.individual = name;
    if (name === current) item.classList.add("current");
    const label = document.createElement("span");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = state.project.individual_colors[index];
    label.append(swatch, `${index + 1} ${name}`);
    const mine = keypointsOf(name);
    const count = document.createElement("span");
    count.className = "where";
    count.textContent = `${mine.filter((i) => pointOf(i)).length}/${mine.length}`;
    item.append(label, count);
    item.addEventListener("click", () => selectIndividual(index));
    return item;
  }));
  // Where the current point can go: the individuals with the same bodypart.
  const select = $("move-to");
  const bodypart = state.project.keypoints[state.bodypart].bodypart;
  const targets = individuals.filter((name) => name !== current && findKeypoint(name, bodypart) >= 0);
  const shown = [...select.options].map((option) => option.value);
  if (shown.join("\n") !== targets.join("\n")) {  // rebuilt only when it changes: it may be open
    const chosen = select.value;
    select.replaceChildren(...targets.map((name) => {
      const option = document.createElement("option");
      option.value = name;
      option.textContent = name;
      return option;
    }));
    if (targets.includes(chosen)) select.value = chosen;
  }
  $("move").disabled = targets.length === 0 || !pointOf(state.bodypart);
}

// Makes individual `index` current: its keypoint of the current bodypart when that one has no
// point yet, else its first keypoint without one (else that same bodypart, or its first).
function selectIndividual(index) {
  const individuals = state.project.individuals;
  if (individuals.length === 0) return;
  const name = individuals[(index + individuals.length) % individuals.length];
  const same = findKeypoint(name, state.project.keypoints[state.bodypart].bodypart);
  const mine = keypointsOf(name);
  const free = mine.find((i) => !pointOf(i));
  if (same >= 0 && !pointOf(same)) state.bodypart = same;
  else if (free !== undefined) state.bodypart = free;
  else state.bodypart = same >= 0 ? same : mine[0];
  render();
}

function stepIndividual(delta) {
  selectIndividual(state.project.individuals.indexOf(currentIndividual()) + delta);
}

// Gives the current point to another individual (the same bodypart of `individual`); the server
// refuses when that individual already has a point there.
async function moveToIndividual(individual) {
  const from = state.bodypart;
  const to = findKeypoint(individual, state.project.keypoints[from].bodypart);
  if (!pointOf(from)) { setStatus("select a placed point first (click it)", "error"); return; }
  if (to < 0 || to === from) {
    setStatus(`${individual} has no ${state.project.keypoints[from].bodypart}`, "error");
    return;
  }
  const step = {video: state.video, image: state.image, from, to};
  await applyMove(step.video, step.image, from, to);
  state.undo.push(step);
  state.redo = [];
}

function renderBodyparts() {
  const list = $("bodyparts");
  list.replaceChildren(...currentKeypoints().map((index) => {
    const name = state.project.keypoints[index].bodypart;
    const item = document.createElement("li");
    item.dataset.bodypart = name;
    if (index === state.bodypart) item.classList.add("current");
    const label = document.createElement("span");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = state.project.colors[index];
    label.append(swatch, name);
    const where = document.createElement("span");
    where.className = "where";
    const point = state.frame && state.frame.points[index];
    const machine = state.frame && state.frame.machine && state.frame.machine[index];
    if (point) where.textContent = `${point.x.toFixed(1)}, ${point.y.toFixed(1)}`;
    else if (machine) where.textContent = `p=${machine.likelihood.toFixed(2)}`;
    else where.textContent = "—";
    item.append(label, where);
    item.addEventListener("click", () => { state.bodypart = index; render(); });
    return item;
  }));
}

// The current individual's bodypart `delta` places from the current one, cyclically.
function stepBodypart(delta) {
  const mine = currentKeypoints();
  const at = mine.indexOf(state.bodypart);
  state.bodypart = mine[(at + delta + mine.length) % mine.length];
  render();
}

// After placing a point: the current individual's next bodypart without one (or simply the next).
function advanceBodypart() {
  const mine = currentKeypoints();
  const at = mine.indexOf(state.bodypart);
  for (let step = 1; step <= mine.length; step += 1) {
    const index = mine[(at + step) % mine.length];
    if (!pointOf(index)) { state.bodypart = index; return; }
  }
  state.bodypart = mine[(at + 1) % mine.length];
}

// ---- view ----

function resizeCanvas() {
  const ratio = window.devicePixelRatio || 1;
  const rect = canvas.getBoundingClientRect();
  canvas.width = Math.round(rect.width * ratio);
  canvas.height = Math.round(rect.height * ratio);
}

function imageSize() {
  if (state.picture) return {width: state.picture.naturalWidth, height: state.picture.naturalHeight};
  if (state.frame && state.frame.width > 0) return {width: state.frame.width, height: state.frame.height};
  return {width: 640, height: 480};
}

function fitView() {
  const rect = canvas.getBoundingClientRect();
  const size = imageSize();
  state.scale = Math.min(rect.width / size.width, rect.height / size.height);
  state.offsetX = (rect.width - size.width * state.scale) / 2;
  state.offsetY = (rect.height - size.height * state.scale) / 2;
}

function toScreen(point) {
  return {x: point.x * state.scale + state.offsetX, y: point.y * state.scale + state.offsetY};
}

function toImage(screen) {
  return {x: (screen.x - state.offsetX) / state.scale, y: (screen.y - state.offsetY) / state.scale};
}

function eventPosition(event) {
  const rect = canvas.getBoundingClientRect();
  return {x: event.clientX - rect.left, y: event.clientY - rect.top};
}

function radius() {
  return Math.max(4, state.project.dotsize / 2);
}

// The bodypart whose point (human, else the network's) is under the screen position, or -1.
function hit(screen, machine) {
  let best = -1, bestDistance = radius() + 4;
  const points = machine ? (state.frame && state.frame.machine) || [] : (state.frame && state.frame.points) || [];
  points.forEach((point, index) => {
    if (!point || (machine && pointOf(index))) return;
    const at = toScreen(point);
    const distance = Math.hypot(at.x - screen.x, at.y - screen.y);
    if (distance <= bestDistance) { best = index; bestDistance = distance; }
  });
  return best;
}

function drawDot(point, color, filled, current) {
  const at = toScreen(point);
  context.beginPath();
  context.arc(at.x, at.y, radius(), 0, 2 * Math.PI);
  context.globalAlpha = filled ? state.project.alphavalue : 1;
  if (filled) { context.fillStyle = color; context.fill(); }
  context.globalAlpha = 1;
  if (!filled) {  // the network's point: a dashed ring on a white halo, visible on any fur
    context.lineWidth = 4;
    context.strokeStyle = "rgba(255, 255, 255, 0.8)";
    context.stroke();
  }
  context.lineWidth = filled ? 1.5 : 2;
  context.setLineDash(filled ? [] : [3, 2]);
  context.strokeStyle = filled ? "#000" : color;
  context.stroke();
  context.setLineDash([]);
  if (current) {
    context.beginPath();
    context.arc(at.x, at.y, radius() + 4, 0, 2 * Math.PI);
    context.strokeStyle = "#fff";
    context.lineWidth = 2;
    context.stroke();
  }
}

function render() {
  if (!state.project) return;
  const ratio = window.devicePixelRatio || 1;
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  context.clearRect(0, 0, canvas.width, canvas.height);
  if (state.picture) {
    context.imageSmoothingEnabled = state.scale < 2;
    const size = imageSize();
    context.drawImage(state.picture, state.offsetX, state.offsetY, size.width * state.scale,
                      size.height * state.scale);
  }
  if (state.frame) {
    const points = state.frame.points;
    context.strokeStyle = state.project.skeleton_color;
    context.lineWidth = 2;
    // Each animal's skeleton joins its own points only.
    const individuals = [...new Set(state.project.keypoints.map((k) => k.individual))];
    for (const individual of individuals) {
      for (const [from, to] of state.project.skeleton) {
        const a = points[findKeypoint(individual, from)], b = points[findKeypoint(individual, to)];
        if (!a || !b) continue;
        const p = toScreen(a), q = toScreen(b);
        context.beginPath();
        context.moveTo(p.x, p.y);
        context.lineTo(q.x, q.y);
        context.stroke();
      }
    }
    (state.frame.machine || []).forEach((point, index) => {
      if (point && !points[index]) drawDot(point, state.project.colors[index], false, index === state.bodypart);
    });
    points.forEach((point, index) => {
      if (point) drawDot(point, state.project.colors[index], true, index === state.bodypart);
    });
  }
  renderIndividuals();
  renderBodyparts();
}

// ---- mouse and keys ----

canvas.addEventListener("mousedown", (event) => {
  if (!state.frame) return;
  canvas.focus();
  const screen = eventPosition(event);
  if (event.button === 2) return;  // contextmenu deletes
  let bodypart = event.button === 0 ? hit(screen, false) : -1;
  let machine = false;
  if (bodypart < 0 && event.button === 0) { bodypart = hit(screen, true); machine = bodypart >= 0; }
  state.drag = bodypart >= 0
    ? {kind: "point", bodypart, machine, start: screen, moved: false, before: pointOf(bodypart)}
    : {kind: "pan", start: screen, moved: false, offsetX: state.offsetX, offsetY: state.offsetY,
       button: event.button};
});

window.addEventListener("mousemove", (event) => {
  const drag = state.drag;
  if (!drag) return;
  const screen = eventPosition(event);
  if (Math.hypot(screen.x - drag.start.x, screen.y - drag.start.y) > 3) drag.moved = true;
  if (!drag.moved) return;
  if (drag.kind === "pan") {
    canvas.classList.add("panning");
    state.offsetX = drag.offsetX + screen.x - drag.start.x;
    state.offsetY = drag.offsetY + screen.y - drag.start.y;
  } else {
    const point = toImage(screen);
    const size = imageSize();
    point.x = Math.min(size.width - 0.01, Math.max(0, point.x));
    point.y = Math.min(size.height - 0.01, Math.max(0, point.y));
    state.frame.points[drag.bodypart] = point;  // shown at once, saved on release
  }
  render();
});

window.addEventListener("mouseup", async (event) => {
  const drag = state.drag;
  state.drag = null;
  canvas.classList.remove("panning");
  if (!drag) return;
  const screen = eventPosition(event);
  if (drag.kind === "point") {
    state.bodypart = drag.bodypart;
    if (drag.moved) {
      const after = state.frame.points[drag.bodypart];
      state.frame.points[drag.bodypart] = drag.before;  // the undo step starts from the saved point
      await edit(drag.bodypart, {x: after.x, y: after.y});
    } else if (drag.machine) {
      const point = state.frame.machine[drag.bodypart];
      await edit(drag.bodypart, {x: point.x, y: point.y});
    }
    render();
    return;
  }
  if (drag.moved || drag.button !== 0) return;
  const point = toImage(screen);
  const size = imageSize();
  if (point.x < 0 || point.y < 0 || point.x >= size.width || point.y >= size.height) return;
  const bodypart = state.bodypart;
  await edit(bodypart, point);
  advanceBodypart();
  render();
});

canvas.addEventListener("contextmenu", async (event) => {
  event.preventDefault();
  const bodypart = hit(eventPosition(event), false);
  if (bodypart >= 0) await edit(bodypart, null);
});

canvas.addEventListener("wheel", (event) => {
  event.preventDefault();
  const screen = eventPosition(event);
  const before = toImage(screen);
  const factor = Math.exp(-event.deltaY * 0.0015);
  state.scale = Math.min(40, Math.max(0.05, state.scale * factor));
  state.offsetX = screen.x - before.x * state.scale;
  state.offsetY = screen.y - before.y * state.scale;
  render();
}, {passive: false});

async function acceptMachine() {
  if (!state.project.refine || !state.frame) return;
  const accepted = (state.frame.machine || []).map((p, i) => (p && !pointOf(i) ? i : -1)).filter((i) => i >= 0);
  if (accepted.length === 0) return;
  const frame = await change("/api/accept", {video: state.video, image: state.image});
  for (const bodypart of accepted) {
    const point = frame.points[bodypart];
    state.undo.push({video: frame.video, image: frame.image, bodypart, before: null, after: point});
  }
  state.redo = [];
}

document.addEventListener("keydown", (event) => {
  if (!state.project || event.target.tagName === "SELECT") return;
  const key = event.key;
  const control = event.ctrlKey || event.metaKey;
  let handled = true;
  if (control && (key === "z" || key === "Z") && !event.shiftKey) undo();
  else if (control && (key === "y" || ((key === "z" || key === "Z") && event.shiftKey))) redo();
  else if (key === "ArrowRight" || key === "PageDown") stepFrame(1);
  else if (key === "ArrowLeft" || key === "PageUp") stepFrame(-1);
  else if (key === "ArrowDown") stepBodypart(1);
  else if (key === "ArrowUp") stepBodypart(-1);
  else if (key === "Tab" && state.project.multi_animal && !control) stepIndividual(event.shiftKey ? -1 : 1);
  else if (state.project.multi_animal && !control && /^Digit[1-9]$/.test(event.code)) {
    const individual = state.project.individuals[Number(event.code.slice(5)) - 1];
    if (individual === undefined) handled = false;
    else if (event.shiftKey) moveToIndividual(individual);
    else selectIndividual(Number(event.code.slice(5)) - 1);
  }
  else if ((key === "Delete" || key === "Backspace") && pointOf(state.bodypart)) edit(state.bodypart, null);
  else if (key === "f" || key === "F") { fitView(); render(); }
  else if (key === "a" || key === "A") acceptMachine();
  else handled = false;
  if (handled) event.preventDefault();
});

$("videos").addEventListener("change", () => {
  const video = state.videos.find((v) => v.stem === $("videos").value);
  if (video && video.frames.length > 0) showFrame(video.stem, video.frames[0].image);
});
$("previous").addEventListener("click", () => stepFrame(-1));
$("next").addEventListener("click", () => stepFrame(1));
$("undo").addEventListener("click", () => undo());
$("redo").addEventListener("click", () => redo());
$("fit").addEventListener("click", () => { fitView(); render(); });
$("accept").addEventListener("click", () => acceptMachine());
$("move").addEventListener("click", () => { if ($("move-to").value) moveToIndividual($("move-to").value); });
window.addEventListener("resize", () => { resizeCanvas(); fitView(); render(); });

// Another tab or tool may have changed the labels: show what is on disk now.
async function refresh() {
  if (document.hidden || state.drag || state.pending > 0 || !state.image) return;
  try {
    await loadFrame(state.video, state.image, false);
    const videos = (await api("/api/videos")).videos;
    if (state.pending === 0) { state.videos = videos; renderFrameList(); }
    const problem = labelProblem(videos);
    if (problem) setStatus(problem, "error");
  } catch (error) {
    setStatus((error.status ? "" : "server unreachable: ") + error.message, "error");
  }
}
window.addEventListener("focus", refresh);
document.addEventListener("visibilitychange", refresh);
setInterval(refresh, 3000);

// For scripts (the browser test) and the console: where an image pixel is on the screen.
window.labpose = {
  state,
  imageToClient(x, y) {
    const rect = canvas.getBoundingClientRect();
    const at = toScreen({x, y});
    return {x: rect.left + at.x, y: rect.top + at.y};
  },
  ready: false,
};

async function start() {
  try {
    state.project = await api("/api/project");
    document.title = `labpose label: ${state.project.project}`;
    $("project").textContent = state.project.project;
    $("scorer").textContent = state.project.scorer;
    $("accept").hidden = !state.project.refine;
    document.body.classList.toggle("multi-animal", state.project.multi_animal);
    resizeCanvas();
    await loadVideos();
    const first = state.videos.find((v) => v.frames.length > 0);
    if (first) await showFrame(first.stem, first.frames[0].image);
    const problem = labelProblem(state.videos);
    if (problem) setStatus(problem, "error");
    else if (!first) setStatus("no frames: run labpose extract-frames first", "error");
    else if (state.frame) setStatus("ready", "");
    render();
    window.labpose.ready = true;
  } catch (error) {
    setStatus("cannot load the project: " + error.message, "error");
  }
}
start();
