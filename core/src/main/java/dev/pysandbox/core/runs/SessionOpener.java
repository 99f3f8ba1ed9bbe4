package dev.pysandbox.core.runs;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.config.Tier;
import dev.pysandbox.core.environments.Environments;
import dev.pysandbox.core.environments.RunEnvironments;
import dev.pysandbox.core.network.EgressWays;
import dev.pysandbox.core.requests.RequestValidator;
import dev.pysandbox.core.sandboxes.BackendGate;
import dev.pysandbox.core.sessions.Session;
import dev.pysandbox.core.sessions.SessionEnds;
import dev.pysandbox.core.sessions.SessionManager;
import dev.pysandbox.egress.EgressPolicy;
import dev.pysandbox.packages.Requirement;
import dev.pysandbox.packages.Requirements;
import dev.pysandbox.store.SessionKey;
import java.util.List;
import java.util.function.Supplier;

/**
 * Opens a tenant's session with what its sandbox needs beyond its tier and limits (a package
 * environment, in an egress tier its way out), for {@code create_session} and for a run on a new
 * {@code session_id}; and holds a session to what it was made with: a call naming another tier or
 * other packages is refused. An id whose session ended within the retention is not made again by a
 * run; a creation that fails is recorded, so that the next call does not make it without its
 * packages.
 */
public final class SessionOpener {
  private final PysandboxConfig config;
  private final SessionManager sessions;
  private final SessionEnds ends;
  private final RequestValidator validator;
  private final RunEnvironments environments;
  private final Environments built;
  private final EgressWays egress;
  private final SandboxBackend backend;

  public SessionOpener(
      PysandboxConfig config,
      SessionManager sessions,
      SessionEnds ends,
      RequestValidator validator,
      RunEnvironments environments,
      Environments built,
      EgressWays egress,
      SandboxBackend backend) {
    this.config = config;
    this.sessions = sessions;
    this.ends = ends;
    this.validator = validator;
    this.environments = environments;
    this.built = built;
    this.egress = egress;
    this.backend = backend;
  }

  /**
   * The tier of the open session a call names without naming a tier (its default timeout applies),
   * or null: the call's own tier, or the default one, which a session it creates gets.
   */
  public Tier tierOf(String tenant, String sessionId, String requestedTier) {
    if (sessionId == null || requestedTier != null) {
      return null;
    }
    Session s = sessions.find(new SessionKey(tenant, sessionId));
    return s == null ? null : s.tier;
  }

  /**
   * The session a run names, made by the run if it is new (with the run's tier and packages), and
   * held to them if it is not.
   */
  Session forRun(RunPlan plan, RunListener progress) {
    Session s =
        open(
            plan.tenant(),
            plan.sessionId(),
            null,
            plan.tier().limits(),
            plan.tier(),
            plan.wanted(),
            null,
            progress,
            false);
    requireSameTier(s, plan.requestedTier());
    requirePackages(s, plan.wanted());
    return s;
  }

  /** {@code create_session}: the session, new or as it is, once its sandbox is ready. */
  public SessionInfo create(
      String tenant,
      String sessionId,
      Integer ttlMinutes,
      LimitRequest limits,
      String tier,
      List<String> packages,
      List<String> networkAllow) {
    String id = sessionId == null ? Ids.newSessionId() : Ids.requireSessionId(sessionId);
    RequestValidator.ttlMinutes(ttlMinutes);
    Tier t = validator.tier(tier == null ? null : Ids.requireTier(tier));
    Limits wanted = validator.limits(limits, t.limits());
    List<Requirement> reqs = Requirements.parse(packages);
    EgressPolicy narrowed = null;
    if (networkAllow != null) {
      if (!Tier.NETWORK_EGRESS.equals(t.network())) {
        throw PysandboxException.invalid(
            "network_allow is for a tier with network (such as 'network'); tier '"
                + t.name()
                + "' has none");
      }
      narrowed = egress.narrow(networkAllow);
    }
    BackendGate.require(backend);
    SessionKey key = new SessionKey(tenant, id);
    if (narrowed != null && sessions.find(key) != null) {
      throw PysandboxException.invalid(
          "session '" + id + "' exists already: its network_allow was fixed when it was created");
    }
    if (sessions.find(key) == null) {
      requireApprovedBuild(id, reqs);
    }
    Session s = open(tenant, id, ttlMinutes, wanted, t, reqs, narrowed, RunListener.NONE, true);
    requireSameTier(s, tier);
    requirePackages(s, reqs);
    sessions.ready(s);
    return s.info();
  }

  /**
   * Building packages runs code the caller chose (an sdist's {@code setup.py}, with a way to the
   * index): under {@code approval_policy=always} create_session may not build them, since it has no
   * run to hold (issue 24 item 2: it did, while run_python with the same packages waited). An
   * environment already built (by an approved run, or the operator) runs nothing and is used.
   */
  private void requireApprovedBuild(String sessionId, List<Requirement> reqs) {
    if (reqs.isEmpty() || !config.approvalPolicy().equals("always")) {
      return;
    }
    if (built.find(built.key(reqs)).isPresent()) {
      return;
    }
    throw new PysandboxException(
        ErrorCode.APPROVAL_REQUIRED,
        "session '"
            + sessionId
            + "' would build packages "
            + reqs.stream().map(Requirement::canonical).toList()
            + " (their build runs code), and the server's approval_policy is always: a person"
            + " approves that first. Call run_python with these packages and session_id (the run"
            + " waits for approval, and its session gets them), or have the environment built"
            + " first; an environment already built is used without approval");
  }

  /**
   * Opens the session (a new one with the extras it needs), or finds it as it is. An id whose
   * session ended within the retention is not made again (unless {@code explicit}: create_session);
   * a creation that fails is recorded, so that the next call does not make it without its packages.
   */
  private Session open(
      String tenant,
      String sessionId,
      Integer ttl,
      Limits limits,
      Tier tier,
      List<Requirement> wanted,
      EgressPolicy narrowed,
      RunListener progress,
      boolean explicit) {
    SessionKey key = new SessionKey(tenant, sessionId);
    Session s = sessions.find(key);
    if (s != null) {
      return s;
    }
    List<String> packages = wanted.stream().map(Requirement::canonical).toList();
    sessions.requireCreatable(key, tier, packages, explicit);
    SessionManager.Extras extras;
    try {
      extras = extras(wanted, tier, key, narrowed, progress);
    } catch (PysandboxException e) {
      ends.creationFailed(
          key, ttl == null ? config.sessionTtlMinutes() : ttl, tier.name(), packages, e);
      throw e;
    }
    return sessions.open(key, ttl, limits, tier, extras, explicit);
  }

  /**
   * A new session's environment, its use and, in an egress tier, its way out ({@code network_allow}
   * or {@code narrowed}).
   */
  private SessionManager.Extras extras(
      List<Requirement> wanted,
      Tier tier,
      SessionKey key,
      EgressPolicy narrowed,
      RunListener progress) {
    Environments.Ready env = environments.ensure(wanted, key.tenant(), progress);
    return new SessionManager.Extras(
        env,
        Tier.NETWORK_EGRESS.equals(tier.network())
            ? egress.forSession(key.tenant(), key.id(), narrowed, runningIn(key))
            : null,
        environments.use(env));
  }

  /** The run a session is running now, asked when a network attempt of its sandbox ends. */
  private Supplier<String> runningIn(SessionKey key) {
    return () -> {
      Session s = sessions.find(key);
      return s == null ? null : s.runningRunId();
    };
  }

  /** A session's packages are its own for its whole life: a call asking for others is refused. */
  private static void requirePackages(Session s, List<Requirement> wanted) {
    List<String> has = s.env == null ? List.of() : s.env.requirements();
    List<String> missing =
        wanted.stream().map(Requirement::canonical).filter(r -> !has.contains(r)).toList();
    if (!missing.isEmpty()) {
      throw PysandboxException.invalid(
          "session '"
              + s.id
              + "' has packages "
              + has
              + ", fixed when it was created, and this call asks for "
              + missing
              + ": create another session with every package it needs (create_session"
              + " packages), or run without session_id");
    }
  }

  /** A session's tier is its own for its whole life: a call naming another is refused. */
  private static void requireSameTier(Session s, String requested) {
    if (requested != null && !requested.equals(s.tier.name())) {
      throw PysandboxException.invalid(
          "session '"
              + s.id
              + "' has tier '"
              + s.tier.name()
              + "', not '"
              + requested
              + "': the session's tier is "
              + s.tier.name()
              + " for its whole life; leave tier out, or use another session");
    }
  }
}
