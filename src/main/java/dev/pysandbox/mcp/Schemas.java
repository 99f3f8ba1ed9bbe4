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
                   "description": "Wall-clock limit in seconds (default 60, at most the server's timeout_max); past it the sandbox is killed and the run is timed_out."}
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
          "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 20,
                    "description": "Runs per page (1-1000)."},
          "offset": {"type": "integer", "minimum": 0, "default": 0,
                     "description": "Runs to skip, for the next page."},
          "status": {"type": "string",
                     "enum": ["running", "succeeded", "failed", "timed_out", "cancelled", "interrupted"],
                     "description": "Only runs in this state."},
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                         "description": "Only runs of this session."}
        },
        "additionalProperties": false
      }
      """;

  static final String GET_RUN =
      """
      {
        "type": "object",
        "properties": {
          "run_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                     "description": "The run's id (run_ + 20 hex), as run_python or list_runs gave it."},
          "include_code": {"type": "boolean", "default": true,
                           "description": "Include the code that ran."}
        },
        "required": ["run_id"],
        "additionalProperties": false
      }
      """;

  static final String SESSION_ID_ONLY =
      """
      {
        "type": "object",
        "properties": {"session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                                      "description": "The session's id."}},
        "required": ["session_id"],
        "additionalProperties": false
      }
      """;

  static final String RUN_ID_ONLY =
      """
      {
        "type": "object",
        "properties": {"run_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                                  "description": "The run's id (run_ + 20 hex)."}},
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
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                         "description": "The session whose /mnt/data receives the file (created if needed)."},
          "filename": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,255}$",
                       "description": "Letters, digits, '.', '_', '-'; no '..'; written to /mnt/data."},
          "content": {"type": "string", "description": "Text content (stored as UTF-8). Give this or content_base64."},
          "content_base64": {"type": "string", "description": "Binary content, base64 (up to upload_max_bytes decoded, 50 MB by default)."},
          "overwrite": {"type": "boolean", "default": false,
                        "description": "Replace a file of that name (else file_exists)."}
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
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                         "description": "List the session's workspace as it is now. Give this or run_id."},
          "run_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                     "description": "List the files the run kept, as it left them."}
        },
        "additionalProperties": false
      }
      """;

  static final String READ_ARTIFACT =
      """
      {
        "type": "object",
        "properties": {
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                         "description": "Read from the session's workspace. Give this or run_id."},
          "run_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                     "description": "Read the file as the run left it."},
          "path": {"type": "string", "description": "Relative to /mnt/data, e.g. out/chart.png."},
          "max_size_bytes": {"type": "integer", "minimum": 1, "default": 5000000,
                             "description": "Refuse a larger file (artifact_too_large); capped at the server's read_max_bytes (16 MiB unless configured)."}
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
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                         "description": "The session's id."},
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
          "session_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                         "description": "The session's id."},
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
