package dev.pysandbox.http.rest;

import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.LongCalls;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.http.ErrorBodies;
import dev.pysandbox.http.HttpFace;
import dev.pysandbox.http.rest.Route.Input;
import dev.pysandbox.http.rest.Route.Output;
import dev.pysandbox.util.DaemonThreads;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The REST face, {@code /api/v1}: every route is a declared operation ({@link RestRoutes}), its
 * arguments gathered from the path, the query or the JSON body and parsed by the same {@link
 * Operation#parse} as MCP's, its answer the JSON of the same api records ({@link Json}), its errors
 * {@link ErrorBodies}. It trusts the server in front of it to have authenticated the request and to
 * have put the caller's tenant in the request attribute {@value #TENANT_ATTRIBUTE}; without one it
 * answers 401 (fails closed). Only {@code GET /api/v1/openapi.json} needs no tenant. Every request
 * of a tenant is recorded in its trajectory ({@link SandboxService#recordCall}) by {@link
 * #service}.
 *
 * <p>Mount it at {@value #MAPPING}. It routes on the path as the client sent it ({@code
 * getRequestURI()}, not the container's normalised path info), so that a file path reaches the core
 * exactly as it was written, decoded once.
 */
public final class RestServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;
  private static final Logger log = LoggerFactory.getLogger(RestServlet.class);

  /** The request attribute with the caller's tenant (a String), set by the server's auth. */
  public static final String TENANT_ATTRIBUTE = "pysandbox.tenant";

  /** The request attribute with the request's id (a String), for the log. */
  public static final String REQUEST_ID_ATTRIBUTE = "pysandbox.request_id";

  /**
   * The request attribute with the id of the run a request started (a String), set by a handler
   * that answers with a stream rather than the run, for the trajectory.
   */
  static final String RUN_ID_ATTRIBUTE = "pysandbox.run_id";

  /** Where the servlet is mounted. */
  public static final String MAPPING = "/api/v1/*";

  /** Where the OpenAPI document is, which the server in front must let in without a key. */
  public static final String DOCUMENT_PATH = "/api/v1/openapi.json";

  private final transient Tenants tenants;
  private final transient RestLimits limits;
  private final transient List<Route> routes;
  private transient ScheduledExecutorService heartbeat;

  /** How often an event stream with nothing to say says so, so that idle connections live. */
  static final long HEARTBEAT_SECONDS = 15;

  /**
   * @param uploadMaxBytes {@code upload_max_bytes}: the largest uploaded file
   * @param codeMaxBytes {@code code_max_bytes}: a JSON body may be 1 MiB more
   * @param resultOutputLimit {@code result_output_limit}: bytes of each output stream a POST /runs
   *     answer carries
   */
  public RestServlet(
      Tenants tenants, long uploadMaxBytes, int codeMaxBytes, int resultOutputLimit) {
    this.tenants = tenants;
    this.limits = new RestLimits(uploadMaxBytes, codeMaxBytes, resultOutputLimit);
    List<Route> all = new ArrayList<>(RestRoutes.all(limits));
    Map<String, Object> document = new LinkedHashMap<>();
    all.add(OpenApiDocument.route(() -> document));
    document.putAll(OpenApiDocument.of(all));
    this.routes = List.copyOf(all);
  }

  /** The servlet with the limits of {@code config}. */
  public static RestServlet of(Tenants tenants, PysandboxConfig config) {
    return new RestServlet(
        tenants, config.uploadMaxBytes(), config.codeMaxBytes(), config.resultOutputLimitBytes());
  }

  @Override
  public void init() {
    heartbeat =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("pysandbox-rest-heartbeat"));
    heartbeat.scheduleWithFixedDelay(
        EventStream::heartbeatAll, HEARTBEAT_SECONDS, HEARTBEAT_SECONDS, TimeUnit.SECONDS);
  }

  @Override
  public void destroy() {
    if (heartbeat != null) {
      heartbeat.shutdownNow();
    }
  }

  /**
   * The longest body any route takes: a multipart upload ({@code upload_max_bytes} + 64 KiB for the
   * form) or a JSON body ({@code code_max_bytes} + 1 MiB). Each route bounds its own body (a JSON
   * body, a raw upload, a form), so the server in front should refuse only a declared length over
   * this and leave a body without one to the route ({@link
   * dev.pysandbox.http.HttpFace#mountBoundingBodies}).
   */
  public long maxBodyBytes() {
    return limits.maxBodyBytes();
  }

  /** The route table, the document's own route last. */
  List<Route> routes() {
    return routes;
  }

  /**
   * What the trajectory needs of a request as it is dispatched: the caller's service once known,
   * the call's name and arguments, its result.
   */
  private static final class Dispatch {
    SandboxService service;
    String tool;
    Map<String, Object> arguments;
    Object result;
  }

  @Override
  protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    long began = System.nanoTime();
    Dispatch d = new Dispatch();
    ErrorCode failed = null;
    try {
      dispatch(req, resp, d);
    } catch (PysandboxException e) {
      failed = e.code();
      if (e.code() == ErrorCode.RATE_LIMITED && !resp.containsHeader("Retry-After")) {
        resp.setHeader("Retry-After", "1"); // a slot frees as soon as one of the caller's ends
      }
      ErrorBodies.drainBody(req, resp);
      ErrorBodies.send(resp, e);
    } catch (IOException e) {
      // The client stopped sending or went away, or the answer broke off mid-file.
      failed = ErrorCode.INVALID_ARGUMENT;
      log.debug("{} {}: {} (request {})", req.getMethod(), req.getRequestURI(), e, requestId(req));
      ErrorBodies.send(
          resp, ErrorCode.INVALID_ARGUMENT, "the request could not be read: " + e.getMessage());
    } catch (RuntimeException e) {
      failed = ErrorCode.INTERNAL;
      log.error(
          "{} {} failed (request {})", req.getMethod(), req.getRequestURI(), requestId(req), e);
      ErrorBodies.send(
          resp,
          ErrorCode.INTERNAL,
          req.getMethod()
              + " "
              + req.getRequestURI()
              + " failed inside the server (a bug; the server's log has the details under request"
              + " "
              + requestId(req)
              + ")");
    } finally {
      record(req, d, failed, System.nanoTime() - began);
    }
  }

  /**
   * Into the caller's trajectory: every request with a tenant that reached a route (or a path that
   * takes other methods). A streamed answer is recorded when its handler returns, as its stream
   * gets under way; a download once the file is sent.
   */
  private static void record(HttpServletRequest req, Dispatch d, ErrorCode failed, long nanos) {
    if (d.service == null || d.tool == null) {
      return;
    }
    String id = req.getAttribute(REQUEST_ID_ATTRIBUTE) instanceof String s ? s : null;
    CallRecord call =
        failed != null
            ? CallRecord.failed(CallRecord.Face.REST, d.tool, d.arguments, failed, id, nanos)
            : CallRecord.answered(CallRecord.Face.REST, d.tool, d.arguments, d.result, id, nanos);
    if (req.getAttribute(RUN_ID_ATTRIBUTE) instanceof String runId) {
      call = call.withRunIfNone(runId);
    }
    d.service.recordCall(call);
  }

  private void dispatch(HttpServletRequest req, HttpServletResponse resp, Dispatch d)
      throws IOException {
    boolean head = req.getMethod().equals("HEAD");
    String method = head ? "GET" : req.getMethod();
    List<String> segments = segments(req);
    Route route = null;
    TreeSet<String> allowed = new TreeSet<>();
    for (Route r : routes) {
      if (segments != null && r.path().matches(segments)) {
        allowed.add(r.method());
        if (r.method().equals(method)) {
          route = r;
        }
      }
    }
    // The route in metrics: its template, never the path as sent.
    req.setAttribute(
        HttpFace.ROUTE_ATTRIBUTE,
        allowed.isEmpty()
            ? "unmatched"
            : req.getContextPath()
                + req.getServletPath()
                + (route != null ? route.path().text() : matchedTemplate(segments)));
    if (allowed.isEmpty()) {
      throw new PysandboxException(
          ErrorCode.NOT_FOUND,
          "no route "
              + req.getMethod()
              + " "
              + req.getRequestURI()
              + " (GET "
              + req.getContextPath()
              + req.getServletPath()
              + "/openapi.json lists them)");
    }
    SandboxService service = null;
    if (req.getAttribute(TENANT_ATTRIBUTE) instanceof String tenant) {
      service = tenants.forTenant(tenant);
    }
    if (route == null) {
      d.service = service;
      d.tool = req.getMethod() + " " + matchedTemplate(segments);
      if (allowed.contains("GET")) {
        allowed.add("HEAD");
      }
      resp.setHeader("Allow", String.join(", ", allowed));
      throw new PysandboxException(
          ErrorCode.METHOD_NOT_ALLOWED,
          req.getMethod()
              + " is not allowed on "
              + req.getRequestURI()
              + " (allowed: "
              + String.join(", ", allowed)
              + ")");
    }
    if (route.output() == Output.DOCUMENT) {
      service = null; // shows nothing of any tenant's, and is not a call of one
    } else if (service == null) {
      resp.setHeader("WWW-Authenticate", "Bearer");
      throw new PysandboxException(
          ErrorCode.UNAUTHENTICATED,
          "the request came without a tenant: the server did not authenticate it");
    }
    d.service = service;
    d.tool = route.id();
    d.arguments = arguments(route, req, segments);
    Arguments args = route.op().parse(d.arguments);
    Object result;
    // A wait, a download or an upload holds its thread on a peer's pace: one of the caller's few.
    LongCalls.Slot slot =
        LongCalls.enter(req.getAttribute(LongCalls.ATTRIBUTE), route.op().name(), args);
    try {
      result = route.handler().handle(new Route.Call(service, args, req, resp));
    } finally {
      slot.close();
    }
    d.result = result instanceof Route.Reply reply ? reply.body() : result;
    if (result == null) {
      return;
    }
    int status = route.status();
    if (result instanceof Route.Reply reply) {
      status = reply.status();
      result = reply.body();
    }
    byte[] body = Json.mapper().writeValueAsBytes(result);
    resp.setStatus(status);
    resp.setContentType("application/json");
    resp.setHeader("Cache-Control", "no-store");
    resp.setContentLength(body.length);
    if (!head) {
      resp.getOutputStream().write(body);
    }
  }

  /** The template of the routes whose path matched, e.g. {@code /runs/{run_id}}. */
  private String matchedTemplate(List<String> segments) {
    for (Route r : routes) {
      if (r.path().matches(segments)) {
        return r.path().toString();
      }
    }
    return "?";
  }

  /**
   * The call's JSON arguments: the path's variables, and the query's or the body's members as the
   * route takes them; an argument given twice is refused.
   */
  private Map<String, Object> arguments(Route route, HttpServletRequest req, List<String> segments)
      throws IOException {
    Operation op = route.op();
    Map<String, List<String>> query = QueryArguments.parse(req.getQueryString());
    Map<String, Object> args = new LinkedHashMap<>();
    if (route.input() == Input.JSON_FIELDS || route.input() == Input.JSON_VALUES) {
      if (!query.isEmpty()) {
        throw PysandboxException.invalid(
            op.name()
                + " takes its arguments in the JSON body, not the query ("
                + String.join(", ", query.keySet())
                + ")");
      }
      Object body = JsonBodies.read(req, limits.jsonBodyMaxBytes());
      if (route.input() == Input.JSON_VALUES) {
        if (body != null) {
          args.put("values", body);
        }
      } else if (body instanceof Map<?, ?> members) {
        members.forEach((k, v) -> args.put((String) k, v));
      } else if (body != null) {
        throw PysandboxException.invalid(
            op.name() + ": the body must be a JSON object of its arguments");
      }
    } else {
      args.putAll(QueryArguments.convert(op, query));
    }
    route
        .path()
        .values(segments)
        .forEach(
            (name, value) -> {
              if (args.containsKey(name)) {
                throw PysandboxException.invalid(
                    op.name()
                        + ": argument '"
                        + name
                        + "' is given by the path ("
                        + route.path()
                        + "); leave it out of the "
                        + (route.input() == Input.JSON_FIELDS ? "body" : "query"));
              }
              args.put(name, value);
            });
    return args;
  }

  /** The path below the mount point, as sent, in segments; {@code null} when it is not below it. */
  private static List<String> segments(HttpServletRequest req) {
    String raw = req.getRequestURI();
    String mount = req.getContextPath() + req.getServletPath();
    if (raw == null || !raw.startsWith(mount + "/")) {
      return null;
    }
    return Arrays.asList(raw.substring(mount.length() + 1).split("/", -1));
  }

  private static String requestId(HttpServletRequest req) {
    return req.getAttribute(REQUEST_ID_ATTRIBUTE) instanceof String id ? id : "(no id)";
  }
}
