"""Model anatomy page: the architecture with the checkpoint's sizes, where the parameters are, the embeddings
and pooler checked live, and the learned position and token-type embeddings."""

from components.services.cache import cached_analysis
from components.state.widgets import lazy_tabs, sentence_pair
from components.ui.layout import explains_family_gaps, page_header, require_text, truncation_notice
from components.views.anatomy import sections as views
from components.views.anatomy.compare import two_models_section

bundle, stage = page_header(
    "Model anatomy", "How this checkpoint is built, and where its parameters are.", page="anatomy"
)
model_name = bundle.name  # the model actually loaded keys every cached result
with stage.side:
    text, text_b = sentence_pair(
        help="Read by the Embeddings, Pooler, Outputs and Two models tabs; it follows you from page to page."
    )
with stage.picture:
    diagram, parameters, named, embeddings, pooler, outputs, positions, two = lazy_tabs(views.TABS, "anatomy_tab")
if diagram.open:
    with diagram:
        views.diagram_section(model_name)
if parameters.open:
    with parameters:
        views.architecture_section(model_name)
if named.open:
    with named:
        views.named_parameters_section(model_name)
for tab, section in (
    (embeddings, views.embeddings_section),
    (pooler, views.pooler_section),
    (outputs, views.outputs_section),
):
    if tab.open:
        with tab, explains_family_gaps():
            if require_text(text):
                truncation_notice(cached_analysis(model_name, text, text_b).encoding)
                section(model_name, text, text_b)
if positions.open:
    with positions, explains_family_gaps():
        views.positions_section(model_name, bundle.capabilities.max_positions)
if two.open:
    with two:
        if require_text(text):
            two_models_section(bundle, text)
