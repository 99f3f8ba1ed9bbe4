package dev.pysandbox.store.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The WHERE clause of a listing built from its optional filters: a filter that is given adds its
 * condition and binds its values, one that is not adds nothing. Written once so that every
 * listing's text and its bound values cannot drift apart.
 */
final class Filters {
  private final StringBuilder where = new StringBuilder(" WHERE 1=1");
  private final List<Object> values = new ArrayList<>();

  /**
   * Adds {@code condition} (with one {@code ?} per value) unless its first value is null.
   *
   * @param values strings, longs or ints
   */
  Filters and(String condition, Object... values) {
    if (values[0] != null) {
      where.append(" AND ").append(condition);
      this.values.addAll(Arrays.asList(values));
    }
    return this;
  }

  /** The clause, from {@code " WHERE"} on. */
  @Override
  public String toString() {
    return where.toString();
  }

  /** Binds the values from the first parameter on; returns the next parameter's index. */
  int bind(PreparedStatement ps) throws SQLException {
    int i = 1;
    for (Object v : values) {
      if (v instanceof String s) {
        ps.setString(i, s);
      } else if (v instanceof Long l) {
        ps.setLong(i, l);
      } else {
        ps.setInt(i, (Integer) v);
      }
      i++;
    }
    return i;
  }
}
