/**
 * The Python packages a run asks for, parsed and validated before anything installs them: {@link
 * dev.pysandbox.packages.Requirement} (one PEP 508 requirement, fail closed: only a name, extras,
 * version specifiers and an environment marker; never a URL, a path, a pip option or shell text),
 * {@link dev.pysandbox.packages.Requirements} (a caller's list: bounded, deduplicated, sorted, and
 * the requirements file pip is given) and {@link dev.pysandbox.packages.ScriptMetadata} (the PEP
 * 723 {@code # /// script} block a script may carry). Everything here is pure: no I/O, no state,
 * safe from any thread. Nothing here depends on any other pysandbox package but {@code api} (for
 * its error type).
 */
package dev.pysandbox.packages;
