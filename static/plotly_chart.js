// The chart element (components/ui/plotly_chart.py): one plotly chart, drawn with BERT Lens's plotly.js
// (static/plotly/plotly.js) in Streamlit's chart theme (static/plotly/theme.json), which stands in for a template.
// Fetched once per tab, as static/plotly's files are: from this file's own address, with the same build version
// in their URLs as in its own (so a browser never mixes an old entry file with a new build's chunks).
const version = new URL(import.meta.url).searchParams.get("v");
const staticFile = (name) => new URL(`plotly/${name}?v=${version}`, import.meta.url).href;
let library;

function plotlyAndTheme() {
  library ??= Promise.all([
    import(staticFile("plotly.js")),
    fetch(staticFile("theme.json")).then((answer) => (answer.ok ? answer.json() : Promise.reject(answer.statusText))),
  ]);
  return library;
}

// The toolbar st.plotly_chart gave: plotly's, less "Share chart" (it sends the data to Plotly's cloud) and the
// selection tools (nothing here selects), plus Fullscreen where the browser has it, for a projector.
const REMOVED = ["sendChartToCloud", "lasso2d", "select2d"];
// On a touch screen plotly shows its toolbar all the time, over the chart's title on a phone; and a swipe on a
// chart scrolls the page (exports.chart turns dragging off), so zoom and pan are of no use there: PNG, reset and
// Fullscreen remain.
const TOUCH_REMOVED = [...REMOVED, "zoom2d", "pan2d", "zoomIn2d", "zoomOut2d", "autoScale2d"];
// 1.4.11 non-text contrast: plotly's toolbar icons are rgba(68, 68, 68, 0.3) on white, 1.7:1; these are 5.3:1.
const TOOLBAR_COLOURS = { color: "#6b6b6b", activecolor: "#1a1a1a" };
const touchScreen = () => matchMedia("(hover: none)").matches;
const FULL_SCREEN = {
  name: "Fullscreen",
  icon: { width: 1000, height: 1000, path: "M0 0h400v100H100v300H0zM600 0h400v400H900V100H600zM0 600h100v300h300v100H0zM900 600h100v400H600V900h300z" },
  click: (chart) => (document.fullscreenElement ? document.exitFullscreen() : chart.requestFullscreen()).catch(() => {}),
};

// A token axis (a category x axis slanted at -60°, as components/views/attention/figures.py draws them) whose labels
// would run into each other (on a phone, for a long sentence) gets them upright, and only as many as fit: every
// other one, every third… (the hover still names every token). Measured on the drawn chart, which knows the
// axis's length; undone when a wider box fits them again.
const SLANTED = -60;
function fitTokenLabels(chart, Plotly) {
  const full = chart._fullLayout;
  const update = {};
  for (const [name, nticks] of Object.entries(chart.bertlens.slanted)) {
    const axis = full[name];
    const count = axis?._categories?.length;
    // A shared axis's upper panel draws no labels (make_subplots(shared_xaxes=True)), and has no tick font then.
    if (!count || !axis._length || !axis.showticklabels) continue;
    const lineHeight = 1.3 * axis.tickfont.size;
    const slantedPitch = (axis._length / count) * Math.ceil(count / nticks) * Math.sin(Math.PI / 3);
    const [tickangle, fitted] =
      slantedPitch >= lineHeight ? [SLANTED, nticks] : [-90, Math.max(1, Math.floor(axis._length / lineHeight))];
    if (axis.tickangle !== tickangle || axis.nticks !== fitted) {
      Object.assign(update, { [`${name}.tickangle`]: tickangle, [`${name}.nticks`]: fitted });
    }
  }
  return Object.keys(update).length ? Plotly.relayout(chart, update) : undefined;
}

const fullScreen = (chart) => document.fullscreenElement === chart;
// The chart's height: its figure's (null: plotly's 450 px), or the screen's in full screen.
const height = (chart) => (fullScreen(chart) ? window.innerHeight : chart.bertlens.height);

// Once per chart element: a click on a point with customdata picks it (a head, a token) where the chart has a
// callback, the chart follows its box's width and the full screen, and is freed when it leaves the page.
function listen(chart, Plotly) {
  chart.on("plotly_click", (event) => {
    const picked = event.points?.[0]?.customdata;
    if (chart.bertlens.pick && picked !== undefined) {
      chart.bertlens.setTriggerValue("pick", ArrayBuffer.isView(picked) ? Array.from(picked) : picked);
    }
  });
  let width = chart.clientWidth;
  const fit = () => {
    width = chart.clientWidth;
    if (!width || !chart._fullLayout) return;  // hidden or purged as its tab closes: relayout would throw
    Plotly.relayout(chart, { width, height: height(chart) })
      .then(() => fitTokenLabels(chart, Plotly))
      .then(() => { chart.bertlens.fittedWidth = width; })
      .catch(() => {});
  };
  // Not on the observer's first call, nor for a change of height: the chart is drawn once.
  const resized = new ResizeObserver(() => chart.isConnected && chart.clientWidth !== width && fit());
  resized.observe(chart);
  chart.addEventListener("fullscreenchange", () => {
    chart.style.background = fullScreen(chart) ? "#fff" : "";
    fit();
  });
  chart.bertlens.purge = () => {
    resized.disconnect();
    Plotly.purge(chart);
  };
}

// Draws one chart element's data (a call of the element's entry, in components/ui/plotly_chart.py); returns what to do
// when the element leaves the page. ``failed(error)`` says beside the chart that it could not be drawn.
export function draw({ parentElement, data, setTriggerValue }, failed) {
  const text = new TextDecoder().decode(data);
  let chart = parentElement.querySelector(".bl-chart");
  if (!chart) {
    chart = document.createElement("div");
    chart.className = "bl-chart";
    chart.setAttribute("role", "figure");
    chart.bertlens = {};
    parentElement.append(chart);
  }
  const state = chart.bertlens;
  state.setTriggerValue = setTriggerValue;
  // Called when the chart leaves the page (Streamlit 1.67 calls the last one returned on unmount, not on new data).
  const leave = () => setTimeout(() => chart.isConnected || state.purge?.());
  if (text === state.drawn) return leave;  // a rerun that sent the same chart: nothing to redraw
  const { figure, config, alt, pick } = JSON.parse(text);
  chart.setAttribute("aria-label", alt);
  state.pick = pick;
  const drawing = (state.drawing = {});  // the newest call draws; an older one still loading stops
  plotlyAndTheme()
    .then(async ([plotly, theme]) => {
      const Plotly = await plotly.ready(figure.data.map((trace) => trace.type ?? "scatter"));
      if (state.drawing !== drawing) return;
      const layout = { ...figure.layout, template: theme };
      if (layout.title?.text) layout.title = { ...layout.title, text: `<b>${layout.title.text}</b>` };  // as Streamlit
      layout.modebar = { ...layout.modebar, ...TOOLBAR_COLOURS };
      state.height = figure.layout.height ?? null;
      state.slanted = Object.fromEntries(
        Object.entries(figure.layout)
          .filter(([name, axis]) => /^xaxis\d*$/.test(name) && axis.type === "category" && axis.tickangle === SLANTED)
          .map(([name, axis]) => [name, axis.nticks ?? 60]),
      );
      layout.height = height(chart);
      layout.width = chart.clientWidth || undefined;  // its box's (as Streamlit): 0 in a hidden tab, plotly's then
      const buttons = document.fullscreenEnabled ? [FULL_SCREEN] : [];
      await Plotly.react(chart, figure.data, layout, { ...config, modeBarButtonsToRemove: touchScreen() ? TOUCH_REMOVED : REMOVED, modeBarButtonsToAdd: buttons });
      await fitTokenLabels(chart, Plotly);
      state.fittedWidth = layout.width;  // the width drawn at (a test waits for it after a resize)
      if (!state.purge) listen(chart, Plotly);
      state.drawn = text;
      parentElement.querySelector(".bl-chart-error")?.remove();
    })
    .catch(failed);
  return leave;
}
