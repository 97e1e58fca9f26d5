export { default } from "plotly.js/lib/scatter3d";
