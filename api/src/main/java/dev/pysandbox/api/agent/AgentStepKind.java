package dev.pysandbox.api.agent;

import dev.pysandbox.api.WireEnum;

/** What one step of an agent run was. */
public enum AgentStepKind implements WireEnum {
  /** The model was asked and answered (its text, its tool calls). */
  MODEL,
  /** Code the model wrote ran in the session (a run of its own, with its run_id). */
  CODE,
  /** The session's code asked the model through llm_query. */
  SUBCALL,
  /** A tool other than run_python (read_file, list_files), or a refused or malformed call. */
  TOOL
}
