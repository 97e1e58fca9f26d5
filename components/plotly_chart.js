// One plotly chart (components/plotly_chart.py), drawn with BERT Lens's plotly.js (static/plotly/plotly.js) in
// Streamlit's chart theme (static/plotly/theme.json), which replaces the template the figure came with. Both are
// fetched once per tab, beside Streamlit's own bundle, so a base path (server.baseUrlPath, a proxy's prefix) is kept.
let library;

function staticFile(name) {
  const bundle = document.querySelector('script[src*="/static/js/"]');
  return new URL(`../../app/static/plotly/${name}`, bundle ? bundle.src : document.baseURI).href;
}

function plotlyAndTheme() {
  library ??= Promise.all([
    import(staticFile("plotly.js")),
    fetch(staticFile("theme.json")).then((response) => response.json()),
  ]);
  return library;
}

// The toolbar st.plotly_chart gave: plotly's, less "Share chart" (it sends the data to Plotly's cloud) and the
// selection tools (nothing here selects), plus Fullscreen, for a projector: the chart fills the screen.
const REMOVED = ["sendChartToCloud", "lasso2d", "select2d"];
const FULL_SCREEN = {
  name: "Fullscreen",
  icon: { width: 1000, height: 1000, path: "M0 0h400v100H100v300H0zM600 0h400v400H900V100H600zM0 600h100v300h300v100H0zM900 600h100v400H600V900h300z" },
  click: (chart) => (document.fullscreenElement ? document.exitFullscreen() : chart.requestFullscreen()),
};

function fitScreen(chart, Plotly) {
  const full = document.fullscreenElement === chart;
  chart.style.background = full ? "#fff" : "";
  Plotly.relayout(chart, { height: full ? window.innerHeight : chart.bertlensHeight });
}

export default function ({ parentElement, data, setTriggerValue }) {
  const { figure, config, alt } = JSON.parse(new TextDecoder().decode(data));
  let chart = parentElement.querySelector(".bl-chart");
  if (!chart) {
    chart = document.createElement("div");
    chart.className = "bl-chart";
    chart.setAttribute("role", "figure");
    parentElement.append(chart);
  }
  chart.setAttribute("aria-label", alt);
  let current = true;
  plotlyAndTheme().then(async ([plotly, theme]) => {
    const Plotly = await plotly.ready(figure.data.map((trace) => trace.type ?? "scatter"));
    if (!current) return;  // newer data arrived meanwhile
    const layout = { ...figure.layout, template: theme };
    if (layout.title?.text) layout.title = { ...layout.title, text: `<b>${layout.title.text}</b>` };  // as Streamlit
    chart.bertlensHeight = layout.height ?? null;  // null: plotly's own (450 px)
    await Plotly.react(chart, figure.data, layout, { ...config, modeBarButtonsToRemove: REMOVED, modeBarButtonsToAdd: [FULL_SCREEN] });
    if (!chart.bertlensPurge) {
      chart.addEventListener("fullscreenchange", () => fitScreen(chart, Plotly));
      // A click on a point with customdata picks it (a head, a token); the server runs the chart's callback.
      chart.on("plotly_click", (event) => {
        const point = event.points?.[0];
        if (point?.customdata !== undefined) setTriggerValue("pick", point.customdata);
      });
      const resized = new ResizeObserver(() => chart.isConnected && Plotly.Plots.resize(chart));
      resized.observe(chart);
      chart.bertlensPurge = () => { resized.disconnect(); Plotly.purge(chart); };
    }
  }).catch((error) => {
    chart.textContent = `This chart could not be drawn (${error}): reload the page to try again.`;
    library = undefined;  // the next chart tries again
  });
  return () => {
    current = false;
    // Gone from the page (not merely redrawn with new data): free plotly's listeners and the resize observer.
    setTimeout(() => chart.isConnected || chart.bertlensPurge?.());
  };
}
