package dev.pysandbox.store.jdbc;

import dev.pysandbox.api.ApiPrincipal;
import dev.pysandbox.util.TimeSource;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link JdbcApiKeys#authenticate}'s answers, yes and no, by key hash, each for at most its time to
 * live: a request then costs a map look-up instead of a store read, and a revocation by another
 * process is seen once the answer expires. Bounded: when full, expired answers are dropped (at most
 * a few times per time to live, so that a flood of made-up keys cannot make every call scan the
 * map) and, if it is still full, a new answer is not kept.
 */
final class AuthenticationCache {
  /** One answer: empty for no; {@code checkedAt} is the time source's nanos before the read. */
  record Answer(Optional<ApiPrincipal> principal, long checkedAt) {}

  private final TimeSource time;
  private final long ttlNanos;
  private final int maxAnswers;
  private final ConcurrentHashMap<String, Answer> answers = new ConcurrentHashMap<>();
  private final AtomicLong lastPurge;

  AuthenticationCache(TimeSource time, long ttlNanos, int maxAnswers) {
    this.time = time;
    this.ttlNanos = ttlNanos;
    this.maxAnswers = maxAnswers;
    this.lastPurge = new AtomicLong(time.nanoTime());
  }

  /** The answer for {@code keyHash} if one was read less than the time to live ago, else null. */
  Answer fresh(String keyHash) {
    Answer a = answers.get(keyHash);
    return a != null && time.nanoTime() - a.checkedAt() < ttlNanos ? a : null;
  }

  /**
   * Keeps an answer.
   *
   * @param checkedAt when the read that gave it started (time source nanos): an answer is never
   *     kept for longer than the time to live after the store said it
   */
  void put(String keyHash, Optional<ApiPrincipal> principal, long checkedAt) {
    if (answers.size() >= maxAnswers) {
      purgeExpired();
      if (answers.size() >= maxAnswers) {
        return;
      }
    }
    answers.put(keyHash, new Answer(principal, checkedAt));
  }

  /** Forgets every answer (after this process revoked a key). */
  void clear() {
    answers.clear();
  }

  int size() {
    return answers.size();
  }

  private void purgeExpired() {
    long now = time.nanoTime();
    long last = lastPurge.get();
    if (now - last < ttlNanos / 4 || !lastPurge.compareAndSet(last, now)) {
      return;
    }
    answers.values().removeIf(a -> now - a.checkedAt() >= ttlNanos);
  }
}
