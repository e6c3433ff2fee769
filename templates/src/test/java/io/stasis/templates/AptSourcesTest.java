package io.stasis.templates;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AptSourcesTest {
    private static final String DEB822 = """
            # the security archive comes first here, and must not match "bookworm"
            Types: deb
            URIs: http://security.example/debian-security
            Suites: bookworm-security
            Components: main

            Types: deb-src
            URIs: http://sources.example/debian
            Suites: bookworm
            Components: main

            Types: deb
            URIs: http://off.example/debian
            Suites: bookworm
            Enabled: no

            Types: deb
            # http://snapshot.example/archive/debian/20250520T000000Z
            URIs: http://mirror.example/debian/
             http://second.example/debian
            Suites: bookworm bookworm-updates
            Components: main
            Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
            """;

    private static final String ONE_LINE = """
            # deb http://commented.example/debian bookworm main
            deb-src http://sources.example/debian bookworm main
            deb http://security.example/debian-security bookworm-security main
            deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example/debian bookworm main contrib # trailing
            """;

    @Test
    void deb822TakesTheFirstEnabledDebStanzaWhoseSuitesIncludeTheSuite() {
        assertThat(AptSources.fromDeb822(DEB822, "bookworm")).contains("http://mirror.example/debian");
        assertThat(AptSources.fromDeb822(DEB822, "bookworm-security")).contains("http://security.example/debian-security");
        assertThat(AptSources.fromDeb822(DEB822, "trixie")).isEmpty();
        assertThat(AptSources.fromDeb822("", "bookworm")).isEmpty();
    }

    @Test
    void oneLineFormatSkipsCommentsSourcesAndOptions() {
        assertThat(AptSources.fromOneLine(ONE_LINE, "bookworm")).contains("http://mirror.example/debian");
        assertThat(AptSources.fromOneLine(ONE_LINE, "bookworm-security")).contains("http://security.example/debian-security");
        assertThat(AptSources.fromOneLine(ONE_LINE, "trixie")).isEmpty();
    }

    @Test
    void prefersDeb822AndFallsBackToSourcesList(@TempDir Path dir) throws Exception {
        Path deb822 = dir.resolve("debian.sources");
        Path list = Files.writeString(dir.resolve("sources.list"), ONE_LINE.replace("mirror.example", "list.example"));
        assertThat(new AptSources(deb822, list).mirrorFor("bookworm")).contains("http://list.example/debian");
        Files.writeString(deb822, DEB822);
        assertThat(new AptSources(deb822, list).mirrorFor("bookworm")).contains("http://mirror.example/debian");
        assertThat(new AptSources(deb822, list).mirrorFor("sid")).isEmpty();
    }

    @Test
    void hostsAreThoseOfEveryEnabledDebSourceInBothFiles(@TempDir Path dir) throws Exception {
        Path deb822 = Files.writeString(dir.resolve("debian.sources"), DEB822);
        Path list = Files.writeString(dir.resolve("sources.list"), ONE_LINE.replace("mirror.example", "list.example"));
        assertThat(new AptSources(deb822, list).hosts())
                .containsExactly("security.example", "mirror.example", "second.example", "list.example");
        assertThat(new AptSources(dir.resolve("none"), dir.resolve("none.list")).hosts()).isEmpty();
    }

    @Test
    void thisHostHasAMirrorForBookworm() {
        Assumptions.assumeTrue(Files.exists(AptSources.DEB822) || Files.exists(AptSources.ONE_LINE));
        assertThat(AptSources.system().mirrorFor("bookworm")).get().asString().startsWith("http");
    }
}
