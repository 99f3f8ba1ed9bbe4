package dev.pysandbox.api;

import java.util.List;

/**
 * One cached package environment, as {@code list_environments} shows it.
 *
 * @param key its content hash: sha256 of the interpreter, the canonical requirements and the index
 *     settings (32 hex characters)
 * @param requirements the canonical PEP 508 requirements it was built from
 * @param sizeBytes what it takes on disk
 * @param createdAt ISO-8601 instant it was built
 * @param lastUsedAt ISO-8601 instant a sandbox last got it
 * @param runs recorded runs that had it (the caller's)
 * @param inUse whether a sandbox has it now (it is never removed then)
 * @param envHash the {@code env_hash} runs with it record
 * @param pipFreeze {@code pip freeze} of what was installed into it
 */
public record EnvironmentInfo(
    String key,
    List<String> requirements,
    long sizeBytes,
    String createdAt,
    String lastUsedAt,
    long runs,
    boolean inUse,
    String envHash,
    String pipFreeze) {
  public EnvironmentInfo {
    requirements = List.copyOf(requirements);
  }
}
