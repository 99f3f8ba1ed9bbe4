/**
 * Recorded runs as notebooks: {@link dev.pysandbox.notebook.Notebooks} renders a run, or a
 * session's runs, as Jupyter's {@code .ipynb} and marimo's {@code .py} (which plain {@code python3}
 * also runs), and {@link dev.pysandbox.notebook.NotebookFiles} writes a run's two files atomically
 * into its run directory. Depends only on {@code api} and {@code util}.
 */
package dev.pysandbox.notebook;
