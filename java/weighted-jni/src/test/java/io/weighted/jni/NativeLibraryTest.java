package io.weighted.jni;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading: from the jar, from -Dweighted.jni.library, the version check, the jar's platforms. */
class NativeLibraryTest {
  /** ELF e_machine per architecture directory name: EM_X86_64, EM_AARCH64. */
  private static final Map<String, Integer> ELF_MACHINE = Map.of("x86_64", 62, "aarch64", 183);

  @Test
  void loadsFromTheJarByDefault() throws Exception {
    Engine.libraryVersion();
    assertThat(NativeLibrary.loadedFrom()).isIn("jar:/native/" + NativeLibrary.platform()
        + "/libweightedjni.so", System.getProperty(NativeLibrary.LIBRARY_PROPERTY));
  }

  @Test
  void systemPropertyOverridesThePath(@TempDir Path dir) throws Exception {
    Path lib = dir.resolve("libweightedjni-custom.so");
    try (var in = NativeLibrary.class.getResourceAsStream(
        "/native/" + NativeLibrary.platform() + "/libweightedjni.so")) {
      Files.copy(in, lib);
    }
    assertThat(probe("-D" + NativeLibrary.LIBRARY_PROPERTY + "=" + lib))
        .startsWith("loaded 2.").endsWith(lib.toString());
    assertThat(probe("-D" + NativeLibrary.LIBRARY_PROPERTY + "=" + dir.resolve("missing.so")))
        .startsWith("refused: ").contains("no such file");
  }

  @Test
  void aLibraryOfAnotherMajorVersionIsRefused() {
    assertThat(NativeLibrary.versionProblem("x.so", 20000, 20000, 2)).isNull();
    assertThat(NativeLibrary.versionProblem("x.so", 20203, 20203, 2)).isNull();
    assertThat(NativeLibrary.versionProblem("x.so", 30000, 20000, 2))
        .contains("speaks C ABI 3.0.0").contains("needs major version 2.x");
    assertThat(NativeLibrary.versionProblem("x.so", 20000, 20000, 3)).contains("refusing");
    assertThat(NativeLibrary.versionProblem("x.so", 10000, 10000, 2)).contains("refusing");
  }

  @Test
  void aLibraryOfAnOlderMinorVersionThanTheGlueIsRefused() {
    assertThat(NativeLibrary.versionProblem("x.so", 20300, 20100, 2)).isNull();  // newer: fine
    assertThat(NativeLibrary.versionProblem("x.so", 20105, 20100, 2)).isNull();  // a patch
    assertThat(NativeLibrary.versionProblem("x.so", 20000, 20100, 2))
        .contains("speaks C ABI 2.0.0").contains("2.1.0").contains("refusing");
  }

  @Test
  void everyJvmNameOfAnArchitectureFindsTheSameLibrary() {
    assertThat(NativeLibrary.platform("Linux", "amd64")).isEqualTo("linux-x86_64");
    assertThat(NativeLibrary.platform("Linux", "x86_64")).isEqualTo("linux-x86_64");
    assertThat(NativeLibrary.platform("Linux", "aarch64")).isEqualTo("linux-aarch64");
    assertThat(NativeLibrary.platform("Linux", "ARM64")).isEqualTo("linux-aarch64");
    assertThat(NativeLibrary.platform("Mac OS X", "aarch64")).isEqualTo("darwin-aarch64");
    assertThat(NativeLibrary.platform("Windows 11", "amd64")).isEqualTo("windows-x86_64");
    assertThat(NativeLibrary.resource("linux-x86_64"))
        .isEqualTo("/native/linux-x86_64/libweightedjni.so");
    assertThat(NativeLibrary.resource("linux-aarch64"))
        .isEqualTo("/native/linux-aarch64/libweightedjni.so");
  }

  /**
   * The platforms the build promised (-Dweighted.native.expect, set by `make test-aarch64` to
   * both Linux ones) are each in the jar's resources as a 64-bit little-endian ELF of the right
   * machine: a library copied under the wrong directory would load nowhere.
   */
  @Test
  void theJarCarriesALibraryOfTheRightMachineForEveryExpectedPlatform() throws IOException {
    List<String> platforms = Arrays.stream(
            System.getProperty("weighted.native.expect", NativeLibrary.platform()).split(","))
        .map(String::trim).filter(p -> !p.isEmpty()).toList();
    assertThat(platforms).contains(NativeLibrary.platform());
    for (String platform : platforms) {
      try (InputStream in = NativeLibrary.class.getResourceAsStream(
          NativeLibrary.resource(platform))) {
        assertThat(in).as("%s in the jar", NativeLibrary.resource(platform)).isNotNull();
        byte[] h = in.readNBytes(20);
        assertThat(Arrays.copyOf(h, 4)).as(platform).containsExactly(0x7f, 'E', 'L', 'F');
        assertThat(h[4]).as("%s: ELFCLASS64", platform).isEqualTo((byte) 2);
        assertThat(h[5]).as("%s: little-endian", platform).isEqualTo((byte) 1);
        int machine = (h[18] & 0xff) | (h[19] & 0xff) << 8;
        String arch = platform.substring(platform.indexOf('-') + 1);
        assertThat(machine).as("%s: e_machine", platform).isEqualTo(ELF_MACHINE.get(arch));
      }
    }
  }

  private static String probe(String property) throws IOException, InterruptedException {
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(List.of(java, property, "-cp",
        System.getProperty("java.class.path"), LoaderProbe.class.getName()))
        .redirectErrorStream(true).start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
  }
}
