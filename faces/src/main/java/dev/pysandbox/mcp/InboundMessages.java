package dev.pysandbox.mcp;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.Json;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Turns one line a client sent into a JSON-RPC message the SDK's session can handle, or into the
 * error it must be answered with: -32700 for what is not JSON, -32600 for what is not a JSON-RPC
 * 2.0 message (batches included: MCP dropped them), -32602 for a request whose parameters cannot be
 * read (a {@code tools/call} without a name, with arguments that are not an object, or naming a
 * tool that does not exist; a {@code logging/setLevel} level outside {@link LogLevels}). Messages
 * are answered in our words, never with a Java exception.
 */
final class InboundMessages {
  /** A line, classified. */
  sealed interface Inbound permits Message, Invalid {}

  /**
   * A well-formed message.
   *
   * @param id the request's id (String, Integer or Long), or null for a notification or response
   * @param method the method, or null for a response
   */
  record Message(McpSchema.JSONRPCMessage message, Object id, String method) implements Inbound {}

  /**
   * A line to answer with an error.
   *
   * @param id the id of the request when it could be read, else null
   */
  record Invalid(Object id, int code, String message) implements Inbound {}

  private final ObjectMapper json;
  private final Supplier<Set<String>> toolNames;

  /**
   * @param json a mapper whose read constraints admit the largest message accepted
   * @param toolNames the tools the server offers
   */
  InboundMessages(ObjectMapper json, Supplier<Set<String>> toolNames) {
    this.json = json;
    this.toolNames = toolNames;
  }

  /** The protocol's mapper, reading strings up to {@code maxMessageBytes}. */
  static ObjectMapper mapper(int maxMessageBytes) {
    return Json.protocolMapper(maxMessageBytes);
  }

  Inbound parse(byte[] bytes, int length) {
    JsonNode node;
    try {
      node = json.readTree(bytes, 0, length);
    } catch (JsonProcessingException e) {
      return new Invalid(
          null, McpSchema.ErrorCodes.PARSE_ERROR, "Parse error: " + describe(e, length));
    } catch (IOException e) {
      return new Invalid(null, McpSchema.ErrorCodes.PARSE_ERROR, "Parse error: " + e.getMessage());
    }
    if (node == null || node.isMissingNode()) {
      return new Invalid(null, McpSchema.ErrorCodes.PARSE_ERROR, "Parse error: an empty line");
    }
    if (node.isArray()) {
      return invalid(null, "batches are not supported (MCP removed JSON-RPC batching)");
    }
    if (!(node instanceof ObjectNode msg)) {
      return invalid(null, "a message must be a JSON object, got " + kind(node));
    }
    JsonNode idNode = msg.get("id");
    Object id = idOf(idNode);
    if (!"2.0".equals(msg.path("jsonrpc").textValue())) {
      return invalid(id, "\"jsonrpc\" must be \"2.0\"");
    }
    if (idNode != null && id == null) {
      return invalid(null, "\"id\" must be a string or an integer, got " + kind(idNode));
    }
    JsonNode method = msg.get("method");
    if (method == null) {
      boolean result = msg.has("result");
      boolean error = msg.has("error");
      if (id == null || result == error) {
        return invalid(
            id,
            "a message needs a \"method\" (request, notification) or an \"id\" with"
                + " exactly one of \"result\" and \"error\" (response)");
      }
      return new Message(json.convertValue(msg, McpSchema.JSONRPCResponse.class), null, null);
    }
    if (!method.isTextual()) {
      return invalid(id, "\"method\" must be a string, got " + kind(method));
    }
    JsonNode params = msg.get("params");
    if (params != null && !params.isNull() && !params.isObject()) {
      return new Invalid(
          id,
          McpSchema.ErrorCodes.INVALID_PARAMS,
          "Invalid params: \"params\" of "
              + method.textValue()
              + " must be an object, got "
              + kind(params));
    }
    if (id == null) {
      return new Message(
          json.convertValue(msg, McpSchema.JSONRPCNotification.class), null, method.textValue());
    }
    String problem = checkParams(method.textValue(), params);
    if (problem != null) {
      return new Invalid(id, McpSchema.ErrorCodes.INVALID_PARAMS, "Invalid params: " + problem);
    }
    return new Message(
        json.convertValue(msg, McpSchema.JSONRPCRequest.class), id, method.textValue());
  }

  /** What is wrong with a request's params that the SDK would answer with a Java message. */
  private String checkParams(String method, JsonNode params) {
    switch (method) {
      case McpSchema.METHOD_INITIALIZE -> {
        if (params == null || !params.path("protocolVersion").isTextual()) {
          return "initialize needs params with a string \"protocolVersion\"";
        }
        if (params.has("clientInfo") && !params.get("clientInfo").isObject()) {
          return "initialize: \"clientInfo\" must be an object";
        }
        if (params.has("capabilities") && !params.get("capabilities").isObject()) {
          return "initialize: \"capabilities\" must be an object";
        }
        return null;
      }
      case McpSchema.METHOD_TOOLS_CALL -> {
        if (params == null || params.isNull()) {
          return "tools/call needs params {\"name\": <tool>, \"arguments\": {...}}";
        }
        JsonNode name = params.get("name");
        if (name == null || !name.isTextual()) {
          return "tools/call needs a string \"name\"" + (name == null ? "" : ", got " + kind(name));
        }
        JsonNode arguments = params.get("arguments");
        if (arguments != null && !arguments.isNull() && !arguments.isObject()) {
          return "tools/call: \"arguments\" must be an object, got " + kind(arguments);
        }
        dev.pysandbox.api.op.Operation op = dev.pysandbox.api.op.Operations.named(name.textValue());
        if (!toolNames.get().contains(name.textValue()) && op != null) {
          return "unknown tool '"
              + name.textValue()
              + (dev.pysandbox.api.op.Operations.AGENT_APPROVALS.contains(op)
                  ? "': a person decides approvals here (the server's agent_may_approve is off)"
                  : "': not enabled on this server (its operator's tools_enabled)")
              + "; tools/list gives the tools it has";
        }
        if (!toolNames.get().contains(name.textValue())) {
          return "unknown tool '"
              + abbreviate(name.textValue())
              + "'; tools/list gives the tools this server has";
        }
        return null;
      }
      case LoggingAsked.METHOD -> {
        return LogLevels.problem(params);
      }
      default -> {
        return null;
      }
    }
  }

  private static Invalid invalid(Object id, String why) {
    return new Invalid(id, McpSchema.ErrorCodes.INVALID_REQUEST, "Invalid Request: " + why);
  }

  /** A request id as the SDK keeps it (String, Integer or Long), or null when it is none. */
  static Object idOf(JsonNode id) {
    if (id == null) {
      return null;
    }
    if (id.isTextual()) {
      return id.textValue();
    }
    if (id.isIntegralNumber() && id.canConvertToLong()) {
      return id.canConvertToInt() ? (Object) id.intValue() : (Object) id.longValue();
    }
    return null;
  }

  /**
   * The id of an over-long message, found in its head without reading the rest: the first top-level
   * {@code "id"} member with a string or integer value, or null.
   */
  Object idFromHead(byte[] head, int length) {
    try (JsonParser p = json.getFactory().createParser(head, 0, length)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      JsonToken t;
      while ((t = p.nextToken()) != null) {
        if (t == JsonToken.END_OBJECT) {
          return null;
        }
        String field = p.currentName();
        JsonToken value = p.nextToken();
        if ("id".equals(field)) {
          if (value == JsonToken.VALUE_STRING) {
            return p.getText();
          }
          if (value == JsonToken.VALUE_NUMBER_INT) {
            long v = p.getLongValue();
            return v == (int) v ? (Object) (int) v : (Object) v;
          }
          return null;
        }
        p.skipChildren();
      }
    } catch (IOException | RuntimeException e) {
      // the head ended (or broke) before an id was found
    }
    return null;
  }

  /** A key that tells request ids apart by type too ("1" and 1 are different requests). */
  static String key(Object id) {
    return (id instanceof String ? "s:" : "n:") + id;
  }

  /**
   * Where the text stops being JSON, in our words: the parser's own message names its internals
   * (tokens it expected, its source), which a client has no use for.
   */
  private static String describe(JsonProcessingException e, int length) {
    var at = e.getLocation();
    String where =
        at == null || at.getByteOffset() < 0
            ? ""
            : " at byte " + Math.min(at.getByteOffset(), length) + " of " + length;
    return e instanceof com.fasterxml.jackson.core.io.JsonEOFException
        ? "the JSON ends before its value is complete" + where
        : "not valid JSON" + where;
  }

  private static String kind(JsonNode n) {
    return switch (n.getNodeType()) {
      case ARRAY -> "an array";
      case OBJECT, POJO -> "an object";
      case STRING -> "a string";
      case NUMBER -> "a number";
      case BOOLEAN -> "a boolean";
      case NULL -> "null";
      default -> "something else";
    };
  }

  static String abbreviate(String s) {
    return s.length() <= 120 ? s : s.substring(0, 117) + "...";
  }

  /** A message as a log line names it: its method (and a request's id). */
  static String describe(McpSchema.JSONRPCMessage m) {
    if (m instanceof McpSchema.JSONRPCRequest r) {
      return r.method() + " #" + r.id();
    }
    if (m instanceof McpSchema.JSONRPCNotification n) {
      return n.method();
    }
    return "a response";
  }
}
