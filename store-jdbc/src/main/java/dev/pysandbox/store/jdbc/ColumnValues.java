package dev.pysandbox.store.jdbc;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;

/**
 * How the run store's tables hold values JDBC has no type for: nested values as JSON text, absent
 * numbers as SQL NULL. One place, so that every kind of row reads back what another wrote.
 */
final class ColumnValues {
  private static final ObjectMapper JSON = Json.mapper();

  private ColumnValues() {}

  /** {@code value} as JSON text; {@code null} for {@code null}. */
  static String json(Object value) {
    if (value == null) {
      return null;
    }
    try {
      return JSON.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise " + value.getClass(), e);
    }
  }

  /**
   * JSON text read back; {@code null} for {@code null}.
   *
   * @throws PysandboxException {@code internal} when the column holds text that is not that JSON
   */
  static <T> T parse(String text, TypeReference<T> type) {
    if (text == null) {
      return null;
    }
    try {
      return JSON.readValue(text, type);
    } catch (JsonProcessingException e) {
      throw new PysandboxException(
          ErrorCode.INTERNAL, "corrupt JSON in the run store: " + e.getMessage(), e);
    }
  }

  static Long getLong(ResultSet rs, String column) throws SQLException {
    long v = rs.getLong(column);
    return rs.wasNull() ? null : v;
  }

  static Integer getInt(ResultSet rs, String column) throws SQLException {
    int v = rs.getInt(column);
    return rs.wasNull() ? null : v;
  }

  static void setInt(PreparedStatement ps, int i, Integer v) throws SQLException {
    if (v == null) {
      ps.setNull(i, Types.INTEGER);
    } else {
      ps.setInt(i, v);
    }
  }

  static void setLong(PreparedStatement ps, int i, Long v) throws SQLException {
    if (v == null) {
      ps.setNull(i, Types.BIGINT);
    } else {
      ps.setLong(i, v);
    }
  }

  /**
   * Binds {@code values} to a statement's parameters in order ({@code ?} 1, 2 …). The values are
   * strings, boxed whole numbers or {@code null} (SQL NULL): the driver binds each as its own
   * setter ({@code setString}, {@code setLong}, {@code setInt}) would, so one call replaces a block
   * of setters numbered by hand.
   */
  static CachedConnection.SqlConsumer<PreparedStatement> params(Object... values) {
    return ps -> {
      for (int i = 0; i < values.length; i++) {
        ps.setObject(i + 1, values[i]);
      }
    };
  }

  /** The first column of every row. */
  static List<String> strings(ResultSet rs) throws SQLException {
    return rows(r -> r.getString(1)).apply(rs);
  }

  /** Maps every row of a result set with {@code row} (which reads the row it is on): a list. */
  static <T> CachedConnection.SqlFunction<ResultSet, List<T>> rows(
      CachedConnection.SqlFunction<ResultSet, T> row) {
    return rs -> {
      List<T> out = new ArrayList<>();
      while (rs.next()) {
        out.add(row.apply(rs));
      }
      return out;
    };
  }
}
