package io.stasis.fs.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.files.SandboxPath;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** The lexical side of paths: what {@link ConfinedRoot} splits and shows, never where it leads. */
class SandboxPathPropertiesTest {

    @Provide
    Arbitrary<String> paths() {
        Arbitrary<String> component = Arbitraries.oneOf(
                Arbitraries.of("", ".", "..", "...", "a", "b.txt", " ", "é"),
                Arbitraries.strings().withChars("abc.-_ ").ofMinLength(1).ofMaxLength(4));
        return component.list().ofMaxSize(12).map(parts -> String.join("/", parts))
                .filter(s -> !s.isEmpty())
                .flatMap(s -> Arbitraries.of(s, "/" + s, s + "/"));
    }

    @Property
    void normalizedIsAbsoluteWithoutDotsOrDoubleSlashes(@ForAll("paths") String raw) {
        String n = new SandboxPath(raw).normalized();

        assertThat(n).startsWith("/").doesNotContain("//");
        assertThat(n.equals("/") || !n.endsWith("/")).isTrue();
        assertThat(List.of(n.split("/"))).doesNotContain(".", "..");
    }

    @Property
    void normalizingIsIdempotent(@ForAll("paths") String raw) {
        String once = new SandboxPath(raw).normalized();

        assertThat(new SandboxPath(once).normalized()).isEqualTo(once);
    }

    @Property
    void componentsAreSingleNamesAndKeepDotDotForTheKernel(@ForAll("paths") String raw) {
        var path = new SandboxPath(raw);
        List<String> comps = path.components();

        assertThat(comps).allSatisfy(c -> assertThat(c).isNotEmpty().doesNotContain("/").isNotEqualTo("."));
        assertThat(comps.stream().filter(".."::equals).count())
                .isEqualTo(List.of(raw.split("/")).stream().filter(".."::equals).count());
        assertThat(path.isRoot()).isEqualTo(comps.isEmpty());
    }

    @Property
    void theDisplayPathOfTheComponentsReadsBackTheSame(@ForAll("paths") String raw) {
        var comps = new SandboxPath(raw).components();

        assertThat(new SandboxPath(SandboxComponents.display(comps)).components()).isEqualTo(comps);
    }
}
