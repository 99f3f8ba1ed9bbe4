package dev.pysandbox.store.jdbc;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Set;
import java.util.zip.CRC32;

/**
 * Reads a database's Flyway history without Flyway: whether every migration up to {@link
 * SqliteDatabase#LATEST_VERSION} has been applied with success, and — for a server — whether each
 * applied script is still the one this build carries (Flyway's own checksum, recomputed here). A
 * store that passes needs nothing from Flyway, whose start-up (it scans the 24,000 entries of the
 * launcher jar for migrations and validates them) was a third of a server's start. Anything else —
 * no history, a failed or missing migration, a newer database, a changed script — is handed to
 * Flyway, which migrates or refuses with its own message ("checksum mismatch").
 */
final class AppliedMigrations {
  private static final String LOCATION = "db/migration/";

  private AppliedMigrations() {}

  /**
   * @param checkScripts also compare each applied script's checksum with this build's
   * @return whether the history is complete, successful and at {@link
   *     SqliteDatabase#LATEST_VERSION} (and, when asked, every script unchanged)
   * @throws SQLException when there is no history to read
   */
  static boolean current(Connection c, boolean checkScripts) throws SQLException {
    Set<Integer> versions = new HashSet<>();
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT version, script, checksum, success FROM flyway_schema_history"
                    + " WHERE version IS NOT NULL")) {
      while (rs.next()) {
        int version;
        try {
          version = Integer.parseInt(rs.getString(1));
        } catch (NumberFormatException e) {
          return false;
        }
        if (!rs.getBoolean(4) || version < 1 || version > SqliteDatabase.LATEST_VERSION) {
          return false;
        }
        if (checkScripts) {
          Integer ours = checksum(rs.getString(2));
          int stored = rs.getInt(3);
          if (ours == null || rs.wasNull() || ours != stored) {
            return false;
          }
        }
        versions.add(version);
      }
    }
    return versions.size() == SqliteDatabase.LATEST_VERSION;
  }

  /**
   * Flyway's checksum of one script of this build ({@code ChecksumCalculator}: a CRC-32 of its
   * lines as UTF-8, without their line ends or a byte-order mark), or null when the build has no
   * such script.
   */
  static Integer checksum(String script) {
    if (script == null || script.contains("/") || script.contains("\\")) {
      return null;
    }
    try (InputStream in =
        AppliedMigrations.class.getClassLoader().getResourceAsStream(LOCATION + script)) {
      if (in == null) {
        return null;
      }
      CRC32 crc = new CRC32();
      BufferedReader lines =
          new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 4096);
      boolean first = true;
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        if (first && !line.isEmpty() && line.charAt(0) == '\uFEFF') {
          line = line.substring(1);
        }
        first = false;
        crc.update(line.getBytes(StandardCharsets.UTF_8));
      }
      return (int) crc.getValue();
    } catch (IOException e) {
      return null;
    }
  }
}
