// The track refinement page: the video's frames with each track's keypoints in its individual's
// colour, a slider to move through the video, "swap A and B from this frame on", undo and save.
// Everything goes through the server's JSON API (labeling/track_server.hpp).
"use strict";

const state = { info: null, frame: 0, points: null, image: null, request: 0 };
const $ = (id) => document.getElementById(id);

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  const answer = await response.json();
  if (!response.ok) {
    const error = new Error(answer.error + (answer.hint ? " (" + answer.hint + ")" : ""));
    error.status = response.status;
    throw error;
  }
  return answer;
}

function say(text, isError) {
  $("message").textContent = text;
  $("message").className = isError ? "error" : "muted";
}

function colorOf(individual) {
  const index = state.info.individuals.indexOf(individual);
  return state.info.colors[index] || "#ffffff";
}

function draw() {
  const canvas = $("frame"), context = canvas.getContext("2d");
  if (state.image) context.drawImage(state.image, 0, 0, canvas.width, canvas.height);
  if (!state.points) return;
  const radius = Math.max(2, state.info.dotsize / 2);
  context.font = "14px sans-serif";
  for (const track of state.points.individuals) {
    const color = colorOf(track.individual);
    let labelAt = null;
    for (const point of track.points) {
      if (!point) continue;
      const [x, y, likelihood] = point;
      context.beginPath();
      context.arc(x, y, radius, 0, 2 * Math.PI);
      if (likelihood >= state.info.pcutoff) {
        context.fillStyle = color;
        context.fill();
      } else {
        context.strokeStyle = color;
        context.stroke();
      }
      if (!labelAt) labelAt = [x, y];
    }
    if (labelAt) {
      context.fillStyle = color;
      context.fillText(track.individual, labelAt[0] + radius + 3, labelAt[1] - radius - 3);
    }
  }
}

async function showFrame(frame) {
  const last = state.info.frames - 1;
  frame = Math.max(0, Math.min(last, Math.round(Number(frame) || 0)));
  state.frame = frame;
  $("number").value = frame;
  $("slider").value = frame;
  const request = ++state.request;
  try {
    const points = await api("/api/points?frame=" + frame);
    const image = new Image();
    image.src = "/api/image?frame=" + frame;
    await image.decode().catch(() => null);
    if (request !== state.request) return;  // a later frame was asked for meanwhile
    state.points = points;
    state.image = image.complete && image.naturalWidth > 0 ? image : null;
    draw();
  } catch (error) {
    say(error.message, true);
  }
}

function showInfo(info) {
  state.info = info;
  const list = $("unsaved");
  list.replaceChildren();
  for (const swap of info.unsaved) {
    const item = document.createElement("li");
    item.textContent = swap.first + " \u2194 " + swap.second + " from frame " + swap.from;
    list.appendChild(item);
  }
  $("undo").disabled = info.unsaved.length === 0;
  $("save").disabled = info.unsaved.length === 0;
}

function fillIndividuals(info) {
  const list = $("individuals");
  for (const individual of info.individuals) {
    const item = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = colorOf(individual);
    item.append(swatch, individual);
    list.appendChild(item);
  }
  const animals = info.individuals.filter((name) => name !== "single");
  for (const [select, pick] of [[$("first"), 0], [$("second"), 1]]) {
    for (const name of animals) select.add(new Option(name, name));
    select.selectedIndex = Math.min(pick, animals.length - 1);
  }
}

// A change sends the revision this page shows: one made in another tab meanwhile is refused
// (409), and the page then shows the tracks as they are.
async function change(path, body, done) {
  try {
    const info = await api(path, { ...body, revision: state.info.revision });
    showInfo(info);
    say(done(info), false);
    await showFrame(state.frame);
  } catch (error) {
    say(error.message, true);
    if (error.status === 409) {
      showInfo(await api("/api/tracks").catch(() => state.info));
      await showFrame(state.frame);
    }
  }
}

function bind() {
  $("slider").addEventListener("input", (event) => showFrame(event.target.value));
  $("number").addEventListener("change", (event) => showFrame(event.target.value));
  $("swap").addEventListener("click", () => {
    const first = $("first").value, second = $("second").value;
    change("/api/swap", { first, second, from: state.frame },
           () => "swapped " + first + " and " + second + " from frame " + state.frame +
                 " (not saved yet)");
  });
  $("undo").addEventListener("click", () => change("/api/undo", {}, () => "undone"));
  $("save").addEventListener("click", () => change("/api/save", {}, (info) =>
    "saved " + info.written.join(", ") + "; the first version is kept in " + info.original));
  document.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT" && event.target.type === "number") return;
    const step = event.shiftKey ? 10 : 1;
    if (event.key === "ArrowRight") showFrame(state.frame + step);
    if (event.key === "ArrowLeft") showFrame(state.frame - step);
  });
  window.addEventListener("beforeunload", (event) => {
    if (state.info && state.info.unsaved.length > 0) event.preventDefault();
  });
}

async function start() {
  try {
    const info = await api("/api/tracks");
    $("video").textContent = info.video;
    $("file").textContent = info.tracks;
    $("count").textContent = "of 0 to " + (info.frames - 1);
    $("slider").max = info.frames - 1;
    $("number").max = info.frames - 1;
    $("frame").width = info.width;
    $("frame").height = info.height;
    showInfo(info);
    fillIndividuals(info);
    bind();
    await showFrame(0);
  } catch (error) {
    say(error.message, true);
  }
}

start();
