package dev.pysandbox.backend;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * {@code backend=auto}: at set-up (the first {@link #unavailableReason()} or {@link #start}), tries
 * the candidates in order, keeps the first that works and closes the others; everything else is
 * that backend's. When none works, says why each failed, in one sentence (as Testcontainers does
 * for its Docker strategies).
 */
public final class AutoBackend implements SandboxBackend {
  private final List<Candidate> candidates;
  private volatile SandboxBackend chosen;
  private volatile List<BackendAttempt> attempts;
  private volatile Runnable onSandboxesLost = () -> {};
  private String unavailable;

  public AutoBackend(List<Candidate> candidates) {
    this.candidates = List.copyOf(candidates);
  }

  /** The backend in use; before set-up, the first that can be built (the one tried first). */
  @Override
  public String name() {
    SandboxBackend b = chosen;
    if (b != null) {
      return b.name();
    }
    return candidates.stream()
        .filter(c -> c.build() != null)
        .findFirst()
        .orElse(candidates.get(0))
        .name();
  }

  @Override
  public synchronized Optional<String> unavailableReason() {
    if (attempts == null) {
      chooseOne();
    }
    return Optional.ofNullable(unavailable);
  }

  private void chooseOne() {
    List<BackendAttempt> tried = new ArrayList<>();
    for (Candidate c : candidates) {
      if (c.build() == null) {
        tried.add(new BackendAttempt(c.name(), c.notBuilt()));
        continue;
      }
      SandboxBackend b;
      try {
        b = c.build().get();
      } catch (RuntimeException e) {
        tried.add(new BackendAttempt(c.name(), e.getMessage()));
        continue;
      }
      Optional<String> why = b.unavailableReason();
      if (why.isEmpty()) {
        tried.add(new BackendAttempt(c.name(), null));
        b.onSandboxesLost(onSandboxesLost);
        chosen = b;
        break;
      }
      tried.add(new BackendAttempt(c.name(), why.get()));
      b.close();
    }
    attempts = List.copyOf(tried);
    if (chosen == null) {
      unavailable =
          "no sandbox backend works here: "
              + tried.stream().map(BackendAttempt::describe).collect(Collectors.joining("; "));
    }
  }

  @Override
  public CompletableFuture<Sandbox> start(SandboxSpec spec) {
    Optional<String> why = unavailableReason();
    if (why.isPresent()) {
      return CompletableFuture.failedFuture(
          new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, why.get()));
    }
    return chosen.start(spec);
  }

  @Override
  public List<BackendAttempt> attempts() {
    unavailableReason();
    return attempts;
  }

  @Override
  public Optional<InterpreterInfo> interpreter() {
    SandboxBackend b = chosen;
    return b == null ? Optional.empty() : b.interpreter();
  }

  @Override
  public Optional<Map<String, Object>> confinement() {
    SandboxBackend b = chosen;
    return b == null ? Optional.empty() : b.confinement();
  }

  @Override
  public Optional<String> sandboxUsers() {
    SandboxBackend b = chosen;
    return b == null ? Optional.empty() : b.sandboxUsers();
  }

  @Override
  public List<String> setupProblems() {
    SandboxBackend b = chosen;
    return b == null ? List.of() : b.setupProblems();
  }

  @Override
  public int reapOrphans(Predicate<String> instanceAlive) {
    SandboxBackend b = chosen;
    return b == null ? 0 : b.reapOrphans(instanceAlive);
  }

  @Override
  public synchronized void onSandboxesLost(Runnable action) {
    onSandboxesLost = action;
    if (chosen != null) {
      chosen.onSandboxesLost(action);
    }
  }

  @Override
  public void stopping() {
    SandboxBackend b = chosen;
    if (b != null) {
      b.stopping();
    }
  }

  @Override
  public void close() {
    SandboxBackend b = chosen;
    if (b != null) {
      b.close();
    }
  }
}
