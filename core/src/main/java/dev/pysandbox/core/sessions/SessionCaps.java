package dev.pysandbox.core.sessions;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.store.SessionKey;
import java.util.function.IntSupplier;

/**
 * How many sessions may be open: {@code max_sessions} on the server, and per tenant {@code
 * max_sessions_per_tenant} or, when it is not set, a fair share of {@code max_sessions} among the
 * tenants that may call (issue 24 item 10), so that one tenant cannot take every session from the
 * others.
 */
final class SessionCaps {
  private final PysandboxConfig config;
  private volatile IntSupplier tenants = () -> 1;

  SessionCaps(PysandboxConfig config) {
    this.config = config;
  }

  /**
   * Shares {@code max_sessions} among {@code tenants} (those that may call: the tenants with API
   * keys on a keyed HTTP face) when {@code max_sessions_per_tenant} is not set.
   */
  void shareAmong(IntSupplier tenants) {
    this.tenants = tenants;
  }

  /**
   * Refuses a new session past either cap.
   *
   * @param open the sessions open on this server
   * @param ofTenant those of them that are the new session's tenant's
   * @throws PysandboxException {@code max_sessions}, saying which cap and how to go on
   */
  void requireRoom(SessionKey id, int open, int ofTenant) {
    if (open >= config.maxSessions()) {
      throw new PysandboxException(
          ErrorCode.MAX_SESSIONS,
          "cannot open session '"
              + id.id()
              + "': "
              + open
              + " sessions are open and max_sessions is "
              + config.maxSessions()
              + "; close one with close_session (or wait for an idle one to expire)");
    }
    int share = perTenant();
    if (ofTenant >= share) {
      throw new PysandboxException(
          ErrorCode.MAX_SESSIONS,
          "cannot open session '"
              + id.id()
              + "': "
              + ofTenant
              + " of your sessions are open and "
              + (config.maxSessionsPerTenantSet()
                  ? "max_sessions_per_tenant is " + share
                  : "your fair share is "
                      + share
                      + " (max_sessions "
                      + config.maxSessions()
                      + " among the "
                      + tenants.getAsInt()
                      + " tenants with keys; max_sessions_per_tenant sets it)")
              + "; close one with close_session (or wait for an idle one to expire)");
    }
  }

  /** Sessions one tenant may have open: the setting, or a fair share of max_sessions. */
  private int perTenant() {
    if (config.maxSessionsPerTenantSet()) {
      return config.maxSessionsPerTenant();
    }
    return Math.max(1, config.maxSessions() / Math.max(1, tenants.getAsInt()));
  }
}
