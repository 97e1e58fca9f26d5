// BERT Lens's plotly.js: the core (scatter included) and the traces its charts draw. 3D comes in its own file,
// fetched only when a chart needs it (Word senses' 3D map). Built by build.mjs into static/plotly/.
import Plotly from "plotly.js/lib/core";
import bar from "plotly.js/lib/bar";
import heatmap from "plotly.js/lib/heatmap";
import sunburst from "plotly.js/lib/sunburst";

Plotly.register([bar, heatmap, sunburst]);

const later = { scatter3d: () => import("./scatter3d.js") };

/** plotly.js, once every trace type in ``types`` is registered. */
export async function ready(types) {
  for (const type of new Set(types)) {
    if (later[type]) {
      const trace = later[type]();
      delete later[type];
      later[type] = () => trace;  // one fetch, however many charts ask at once
      Plotly.register((await trace).default);
    }
  }
  return Plotly;
}
