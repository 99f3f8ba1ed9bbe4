package dev.pysandbox.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(10)
@Fast
class EgressPolicyTest {
  private static final EgressPolicy PYPI =
      EgressPolicy.of(List.of("pypi.org", "*.pythonhosted.org"), false);

  @Test
  void of_normalizesCaseIdnTrailingDotAndDuplicates() {
    EgressPolicy p =
        EgressPolicy.of(
            List.of(" PyPI.org ", "pypi.org.", "Bücher.Example", "*.Example.COM:8443"), false);
    assertThat(p.allow())
        .containsExactly("pypi.org", "xn--bcher-kva.example", "*.example.com:8443");
    assertThat(p.checkHost("bücher.example", 443).allowed()).isTrue();
    assertThat(p.checkHost("xn--bcher-kva.example", 80).allowed()).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "  ",
        "*",
        "*.",
        "*.com",
        "py*.org",
        "a.*.org",
        "**.pypi.org",
        "https://pypi.org",
        "pypi.org/simple",
        "user@pypi.org",
        "pypi.org:0",
        "pypi.org:65536",
        "pypi.org:http",
        "under_score.example",
        "-lead.example",
        "a..b",
        "1.2.3.4",
        "[::1]",
        "::1",
        "10.0.0.1:8080"
      })
  void of_refusesBadPatterns(String pattern) {
    assertThatThrownBy(() -> EgressPolicy.of(List.of(pattern), false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(pattern.strip().isEmpty() ? "empty" : "'");
  }

  @Test
  void of_refusalNamesThePattern() {
    assertThatThrownBy(() -> EgressPolicy.of(List.of("pypi.org", "https://evil.com/x"), false))
        .hasMessageContaining("'https://evil.com/x'")
        .hasMessageContaining("not a URL");
    assertThatThrownBy(() -> EgressPolicy.of(List.of("10.0.0.1"), false))
        .hasMessageContaining("'10.0.0.1'")
        .hasMessageContaining("allowPrivate");
  }

  @Test
  void of_refusesNamesOver253Characters() {
    String label = "a".repeat(60);
    String longName = String.join(".", label, label, label, label, label, "example");
    assertThat(longName.length()).isGreaterThan(253);
    assertThatThrownBy(() -> EgressPolicy.of(List.of(longName), false)).hasMessageContaining("253");
  }

  @Test
  void of_acceptsIpLiteralsOnlyWithAllowPrivate() {
    EgressPolicy p = EgressPolicy.of(List.of("127.0.0.1:8080", "[::1]:9090", "::2"), true);
    assertThat(p.allow()).containsExactly("127.0.0.1:8080", "[::1]:9090", "[::2]");
    assertThat(p.checkHost("127.0.0.1", 8080).allowed()).isTrue();
    assertThat(p.checkHost("[::1]", 9090).allowed()).isTrue();
    assertThat(p.checkHost("0:0:0:0:0:0:0:1", 9090).allowed()).isTrue();
    assertThat(p.checkHost("127.0.0.1", 8081).reason()).contains("port 8081");
  }

  @Test
  void checkHost_wildcardCoversSubdomainsButNotTheApex() {
    assertThat(PYPI.checkHost("files.pythonhosted.org", 443).allowed()).isTrue();
    assertThat(PYPI.checkHost("a.b.pythonhosted.org", 443).allowed()).isTrue();
    assertThat(PYPI.checkHost("pythonhosted.org", 443).allowed()).isFalse();
    assertThat(PYPI.checkHost("evilpythonhosted.org", 443).allowed()).isFalse();
    assertThat(PYPI.checkHost("PYPI.ORG.", 443).allowed()).isTrue();
    assertThat(PYPI.checkHost("www.pypi.org", 443).allowed()).isFalse();
  }

  @Test
  void checkHost_refusalNamesHostAndAllowList() {
    EgressPolicy.Decision d = PYPI.checkHost("evil.com", 443);
    assertThat(d.allowed()).isFalse();
    assertThat(d.reason())
        .isEqualTo(
            "host 'evil.com' is not in the allow-list (allowed: pypi.org, *.pythonhosted.org)");
    assertThat(EgressPolicy.of(List.of(), false).checkHost("pypi.org", 443).reason())
        .contains("(allowed: none)");
  }

  @Test
  void checkHost_portsAre80And443UnlessThePatternNamesOne() {
    assertThat(PYPI.checkHost("pypi.org", 80).allowed()).isTrue();
    assertThat(PYPI.checkHost("pypi.org", 443).allowed()).isTrue();
    assertThat(PYPI.checkHost("pypi.org", 8080).reason())
        .isEqualTo(
            "port 8080 of 'pypi.org' is not in the allow-list (allowed: pypi.org, *.pythonhosted.org)");
    EgressPolicy custom = EgressPolicy.of(List.of("example.com:8443"), false);
    assertThat(custom.checkHost("example.com", 8443).allowed()).isTrue();
    assertThat(custom.checkHost("example.com", 443).allowed()).isFalse();
    assertThat(custom.checkHost("example.com", 0).reason()).contains("out of range");
  }

  @Test
  void checkHost_ipLiteralsGetTheAddressRuleFirst() {
    EgressPolicy p = EgressPolicy.of(List.of("pypi.org"), false);
    assertThat(p.checkHost("10.1.2.3", 80).reason()).isEqualTo("'10.1.2.3' is a private address");
    assertThat(p.checkHost("169.254.169.254", 80).reason())
        .isEqualTo("'169.254.169.254' is a cloud metadata address");
    assertThat(p.checkHost("[::1]", 443).reason()).isEqualTo("'::1' is a loopback address");
    assertThat(p.checkHost("8.8.8.8", 443).reason())
        .isEqualTo("host '8.8.8.8' is not in the allow-list (allowed: pypi.org)");
  }

  @Test
  void checkHost_refusesMalformedHosts() {
    assertThat(PYPI.checkHost("", 443).reason()).isEqualTo("no host given");
    assertThat(PYPI.checkHost("bad_host", 443).reason()).contains("not a valid host name");
    assertThat(PYPI.checkHost("1:2:zz", 443).reason()).contains("not a valid host name");
    assertThat(PYPI.checkHost("fe80::1%eth0", 443).reason()).contains("not a valid");
  }

  @ParameterizedTest(name = "{0} is {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "127.0.0.1|a loopback address",
        "127.255.0.9|a loopback address",
        "10.0.0.1|a private address",
        "172.16.0.1|a private address",
        "172.31.255.255|a private address",
        "192.168.1.1|a private address",
        "169.254.1.1|a link-local address",
        "169.254.169.254|a cloud metadata address",
        "100.64.0.1|a shared (CGNAT, 100.64.0.0/10) address",
        "100.127.255.254|a shared (CGNAT, 100.64.0.0/10) address",
        "0.0.0.0|the unspecified address",
        "0.1.2.3|a 'this network' (0.0.0.0/8) address",
        "224.0.0.1|a multicast address",
        "239.255.255.250|a multicast address",
        "255.255.255.255|the broadcast address",
        "240.0.0.1|a reserved (240.0.0.0/4) address",
        "::1|a loopback address",
        "::|the unspecified address",
        "fc00::1|a private (unique local, fc00::/7) address",
        "fd12:3456::1|a private (unique local, fc00::/7) address",
        "fe80::1|a link-local address",
        "fec0::1|a site-local address",
        "ff02::1|a multicast address",
        "fd00:ec2::254|a cloud metadata address",
        "::ffff:10.0.0.1|a private address",
        "::ffff:169.254.169.254|a cloud metadata address",
        "::127.0.0.1|a loopback address (IPv4-compatible)",
        "64:ff9b::a9fe:a9fe|a cloud metadata address (NAT64)",
        "2002:7f00:1::1|a loopback address (6to4)"
      })
  void checkAddress_refusesEveryNonPublicClass(String literal, String kind) throws Exception {
    EgressPolicy strict = EgressPolicy.of(List.of("pypi.org"), false);
    EgressPolicy.Decision d = strict.checkAddress(InetAddress.getByName(literal));
    assertThat(d.allowed()).isFalse();
    assertThat(d.reason()).endsWith(" is " + kind);
    assertThat(
            EgressPolicy.of(List.of(), true).checkAddress(InetAddress.getByName(literal)).allowed())
        .isTrue();
  }

  @Test
  void checkAddress_judgesAnIpv6MappedAddressKeptAsIpv6() throws Exception {
    // InetAddress.getByName turns ::ffff:a.b.c.d into an Inet4Address; one built from raw bytes
    // stays an Inet6Address, and must be judged by the IPv4 address it carries.
    byte[] mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 127, 0, 0, 1};
    InetAddress a = Inet6Address.getByAddress(null, mapped, null);
    assertThat(a).isInstanceOf(Inet6Address.class);
    assertThat(PYPI.checkAddress(a).reason())
        .isEqualTo("'::ffff:127.0.0.1' is a loopback address (IPv4-mapped)");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"151.101.0.223", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2a04:4e42::223"})
  void checkAddress_allowsPublicAddresses(String literal) throws Exception {
    assertThat(PYPI.checkAddress(InetAddress.getByName(literal)).allowed()).isTrue();
  }

  @Test
  void narrow_acceptsPatternsTheServerCovers() {
    EgressPolicy server =
        EgressPolicy.of(List.of("*.example.com", "pypi.org", "mirror.example.org:8443"), false);
    EgressPolicy session =
        server.narrow(
            List.of("api.example.com", "*.api.example.com", "*.example.com", "pypi.org:443"));
    assertThat(session.allow())
        .containsExactly("api.example.com", "*.api.example.com", "*.example.com", "pypi.org:443");
    assertThat(session.allowPrivate()).isFalse();
    assertThat(session.checkHost("pypi.org", 80).allowed()).isFalse();
    assertThat(server.narrow(List.of()).checkHost("pypi.org", 443).allowed()).isFalse();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "example.com",
        "evil.com",
        "pypi.org:8080",
        "*.pypi.org",
        "mirror.example.org",
        "other.example.org:8443"
      })
  void narrow_neverWidens(String requested) {
    EgressPolicy server =
        EgressPolicy.of(List.of("*.example.com", "pypi.org", "mirror.example.org:8443"), false);
    assertThatThrownBy(() -> server.narrow(List.of("api.example.com", requested)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + requested + "' is not covered")
        .hasMessageContaining("never widen");
  }

  @Test
  void narrow_keepsAllowPrivateAndItsIpLiterals() {
    EgressPolicy server = EgressPolicy.of(List.of("127.0.0.1:8080", "localhost:8080"), true);
    EgressPolicy session = server.narrow(List.of("127.0.0.1:8080"));
    assertThat(session.allowPrivate()).isTrue();
    assertThatThrownBy(() -> server.narrow(List.of("127.0.0.2:8080")))
        .hasMessageContaining("'127.0.0.2:8080'");
    EgressPolicy strict = EgressPolicy.of(List.of("pypi.org"), false);
    assertThatThrownBy(() -> strict.narrow(List.of("127.0.0.1")))
        .hasMessageContaining("allowPrivate");
  }

  @Test
  void decision_refusalNeedsAReason() {
    assertThatThrownBy(() -> new EgressPolicy.Decision(false, null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new EgressPolicy.Decision(true, "why"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
