package dev.pysandbox.mcp;

/** The tools' input schemas: the argument contract of ARCHITECTURE.md, as JSON Schema. */
final class Schemas {
  private Schemas() {}

  static final String RUN_PYTHON =
      """
      {
        "type": "object",
        "properties": {
          "code": {"type": "string", "minLength": 1,
                   "description": "Python source to run (at most 100 000 UTF-8 bytes). The value of a trailing expression is returned as the result."},
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                   "description": "Run in this session (state and files persist). Omit for a fresh one-shot sandbox."},
          "description": {"type": "string", "maxLength": 10000,
                   "description": "What this code is for; kept with the run."},
          "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 3600, "default": 60,
                   "description": "Wall-clock limit; the sandbox is killed when it passes."}
        },
        "required": ["code"],
        "additionalProperties": false
      }
      """;

  static final String LIST_RUNS =
      """
      {
        "type": "object",
        "properties": {
          "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 20},
          "offset": {"type": "integer", "minimum": 0, "default": 0},
          "status": {"type": "string",
                     "enum": ["pending", "awaiting_approval", "running", "succeeded", "failed",
                              "timed_out", "cancelled", "interrupted", "rejected"]},
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}
        },
        "additionalProperties": false
      }
      """;

  static final String GET_RUN =
      """
      {
        "type": "object",
        "properties": {
          "run_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
          "include_code": {"type": "boolean", "default": true},
          "include_notebook_source": {"type": "boolean", "default": false}
        },
        "required": ["run_id"],
        "additionalProperties": false
      }
      """;

  static final String NO_ARGS =
      """
      {"type": "object", "properties": {}, "additionalProperties": false}
      """;
}
