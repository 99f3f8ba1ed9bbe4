package dev.pysandbox.core.audit;

import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.Version;
import dev.pysandbox.backend.InterpreterInfo;
import java.util.Optional;

/**
 * What ran a run, recorded with it: the interpreter's version, the environment's hash (computed
 * once per interpreter probe, {@link InterpreterInfo#envHash()}) and this server's version. The
 * backend, the limits and the request id are recorded by the run itself.
 */
public record Provenance(String interpreter, String envHash, String serverVersion) {
  /** Before the backend has probed its interpreter. */
  public static final Provenance UNKNOWN = new Provenance(null, null, Version.VALUE);

  public static Provenance of(Optional<InterpreterInfo> info) {
    return info.map(i -> new Provenance(i.version(), i.envHash(), Version.VALUE)).orElse(UNKNOWN);
  }

  public RunRecord.Builder applyTo(RunRecord.Builder run) {
    return run.interpreter(interpreter).envHash(envHash).serverVersion(serverVersion);
  }
}
