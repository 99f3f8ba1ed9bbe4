package dev.pysandbox.store;

import dev.pysandbox.api.SessionInfo;

/**
 * What {@link RunStore#claimSession} found: the id is now ours, or a live server owns it, or it
 * ended too recently to be taken as a new session.
 *
 * @param owner the instance id of the live server that has it open, or null
 * @param ended the session as it ended ({@link SessionInfo#ended()} set), or null
 */
public record SessionClaim(String owner, SessionInfo ended) {
  public static final SessionClaim OURS = new SessionClaim(null, null);

  public boolean ours() {
    return owner == null && ended == null;
  }

  public static SessionClaim ownedBy(String instanceId) {
    return new SessionClaim(java.util.Objects.requireNonNull(instanceId), null);
  }

  public static SessionClaim ended(SessionInfo session) {
    return new SessionClaim(null, java.util.Objects.requireNonNull(session));
  }
}
