package dev.pysandbox.egress;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Tells which door a request came through, from the connector (one per door) that accepted it, so
 * the handlers behind apply that door's policy. A sandbox's identity is the socket it can reach;
 * nothing in the request itself is trusted for it.
 */
final class DoorRouter extends Handler.Wrapper {
  private final Map<Connector, ProxyDoor> doors = new ConcurrentHashMap<>();

  DoorRouter(Handler next) {
    super(next);
  }

  void add(Connector connector, ProxyDoor door) {
    doors.put(connector, door);
  }

  void remove(Connector connector) {
    doors.remove(connector);
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    ProxyDoor door = doors.get(request.getConnectionMetaData().getConnector());
    if (door == null || door.closed()) {
      PlainResponses.write(request, response, callback, 503, "this egress door is closed");
      return true;
    }
    request.setAttribute(ProxyDoor.ATTRIBUTE, door);
    return super.handle(request, response, callback);
  }
}
