// pgjdbc (Debian's libpostgresql-jdbc-java) against `basin serve`, as BI tools (DBeaver,
// Metabase) browse a database: what they send on connecting, then DatabaseMetaData. Run by
// jdbc_test.cc as `java -cp postgresql.jar JdbcMetadataClient.java <port> <password>`;
// prints one line per fact, "key<TAB>value", for the test to check.
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.util.Properties;

public class JdbcMetadataClient {
  static void print(String key, Object value) { System.out.println(key + "\t" + value); }

  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.setProperty("user", "admin");
    props.setProperty("password", args[1]);
    props.setProperty("ApplicationName", "basin-jdbc-test");
    String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/basin";
    try (Connection conn = DriverManager.getConnection(url, props)) {
      try (Statement st = conn.createStatement()) {
        // What BI tools send on connecting, besides the driver's startup parameters.
        st.execute("SET extra_float_digits = 3");
        st.execute("SET application_name = 'Metabase'");
        try (ResultSet rs = st.executeQuery("SELECT version(), current_schema()")) {
          rs.next();
          print("version", rs.getString(1));
          print("current_schema", rs.getString(2));
        }
        try (ResultSet rs = st.executeQuery("SELECT current_setting('application_name')")) {
          rs.next();
          print("application_name", rs.getString(1));
        }
        // Result column types by OID, as a tool labels them, and pg_type read by those OIDs.
        try (ResultSet rs = st.executeQuery("SELECT id, name, amount, created FROM sales.orders")) {
          ResultSetMetaData md = rs.getMetaData();
          for (int c = 1; c <= md.getColumnCount(); c++) {
            print("result_type", md.getColumnName(c) + " " + md.getColumnTypeName(c) + " " + md.getColumnType(c));
          }
        }
        try (ResultSet rs = st.executeQuery(
                 "SELECT a.attname, a.atttypid, t.typname, pg_catalog.format_type(a.atttypid, a.atttypmod) "
                 + "FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid "
                 + "JOIN pg_catalog.pg_type t ON t.oid = a.atttypid WHERE c.relname = 'orders' ORDER BY a.attnum")) {
          while (rs.next()) {
            print("pg_attribute", rs.getString(1) + " " + rs.getInt(2) + " " + rs.getString(3) + " " + rs.getString(4));
          }
        }
      }
      // pgjdbc sends SHOW TRANSACTION ISOLATION LEVEL and maps the answer to its constants.
      print("isolation", conn.getTransactionIsolation() == Connection.TRANSACTION_READ_COMMITTED
          ? "read committed" : String.valueOf(conn.getTransactionIsolation()));
      try (Statement st = conn.createStatement()) {
        st.execute("SET statement_timeout = 150");
        try (ResultSet rs = st.executeQuery("SHOW statement_timeout")) {
          rs.next();
          print("statement_timeout", rs.getString(1));
        }
        try {
          st.executeQuery("SELECT count(*) FROM range(1000000000000) a(i) WHERE hash(a.i) % 7 = 99");
          print("timeout", "none");
        } catch (java.sql.SQLException e) {
          print("timeout", e.getSQLState() + " " + e.getMessage());
        }
      }
      DatabaseMetaData meta = conn.getMetaData();
      try (ResultSet rs = meta.getSchemas()) {
        while (rs.next()) print("schema", rs.getString("TABLE_SCHEM"));
      }
      try (ResultSet rs = meta.getTables(null, null, "%", new String[] {"TABLE", "VIEW"})) {
        while (rs.next()) print("table", rs.getString("TABLE_SCHEM") + "." + rs.getString("TABLE_NAME") + " " + rs.getString("TABLE_TYPE"));
      }
      try (ResultSet rs = meta.getColumns(null, "sales", "orders", "%")) {
        while (rs.next()) {
          print("column", rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME") + " " + rs.getInt("DATA_TYPE")
              + " " + rs.getString("IS_NULLABLE"));
        }
      }
      try (ResultSet rs = meta.getPrimaryKeys(null, "sales", "orders")) {
        int keys = 0;
        while (rs.next()) keys++;
        print("primary_keys", keys);
      }
    }
    print("done", "ok");
  }
}
