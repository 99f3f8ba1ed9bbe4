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

  static final String SESSION_ID_ONLY =
      """
      {
        "type": "object",
        "properties": {"session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}},
        "required": ["session_id"],
        "additionalProperties": false
      }
      """;

  static final String RUN_ID_ONLY =
      """
      {
        "type": "object",
        "properties": {"run_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}},
        "required": ["run_id"],
        "additionalProperties": false
      }
      """;

  static final String CREATE_SESSION =
      """
      {
        "type": "object",
        "properties": {
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                         "description": "Omit to get a generated sess_ + 12 hex id."},
          "ttl_minutes": {"type": "integer", "minimum": 1, "maximum": 10080,
                          "description": "Idle minutes before the session is closed (default 30)."},
          "memory_limit_mb": {"type": "integer", "minimum": 64,
                              "description": "Memory of the session's sandbox in MiB, no swap (server default 512; check_setup shows the maximum). Passing it kills the process that allocates: the run ends with kill_reason memory_limit."},
          "pids_limit": {"type": "integer", "minimum": 4,
                         "description": "Processes and threads at once (server default 128)."},
          "cpu_limit": {"type": "number", "minimum": 0.05,
                        "description": "CPU cores the session may use (server default 1)."},
          "disk_quota_mb": {"type": "integer", "minimum": 1,
                            "description": "Total size of the files in /mnt/data in MiB (server default 1024)."}
        },
        "additionalProperties": false
      }
      """;

  static final String UPLOAD_FILE =
      """
      {
        "type": "object",
        "properties": {
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
          "filename": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,255}$",
                       "description": "Letters, digits, '.', '_', '-'; no '..'; written to /mnt/data."},
          "content": {"type": "string", "description": "Text content (stored as UTF-8)."},
          "content_base64": {"type": "string", "description": "Binary content, base64."},
          "overwrite": {"type": "boolean", "default": false}
        },
        "required": ["session_id", "filename"],
        "additionalProperties": false
      }
      """;

  static final String LIST_ARTIFACTS =
      """
      {
        "type": "object",
        "properties": {
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
          "run_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}
        },
        "additionalProperties": false
      }
      """;

  static final String READ_ARTIFACT =
      """
      {
        "type": "object",
        "properties": {
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
          "run_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
          "path": {"type": "string", "description": "Relative to /mnt/data, e.g. out/chart.png."},
          "max_size_bytes": {"type": "integer", "minimum": 1, "default": 5000000}
        },
        "required": ["path"],
        "additionalProperties": false
      }
      """;

  static final String GET_CONTEXT =
      """
      {
        "type": "object",
        "properties": {
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
          "names": {"type": "array", "items": {"type": "string"},
                    "description": "Globals to return; omit for all (modules excluded)."}
        },
        "required": ["session_id"],
        "additionalProperties": false
      }
      """;

  static final String SET_CONTEXT =
      """
      {
        "type": "object",
        "properties": {
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
          "values": {"type": "object", "description": "Each key becomes a global with its JSON value."}
        },
        "required": ["session_id", "values"],
        "additionalProperties": false
      }
      """;

  static final String NO_ARGS =
      """
      {"type": "object", "properties": {}, "additionalProperties": false}
      """;
}
