package io.stasis.core.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** Permissions on the wire: each parses from its own name and only from it; anything else is an invalid request naming the field. */
class PermissionTest {
    private static final Set<String> WIRE_NAMES = Arrays.stream(Permission.values()).map(Permission::wireName).collect(Collectors.toSet());

    @Test
    void everyPermissionParsesFromItsWireNameWhichIsUniqueAndStable() {
        for (var p : Permission.values()) {
            assertThat(Permission.parse(p.wireName(), "permissions[0]")).isEqualTo(p);
            assertThat(p.toString()).isEqualTo(p.wireName());
        }
        assertThat(WIRE_NAMES).hasSize(Permission.values().length);
        assertThat(Arrays.stream(Permission.values()).map(Permission::wireName)).containsExactly(
                "sandbox:read", "sandbox:lifecycle", "sandbox:delete", "exec", "files:read", "files:write", "checkpoints", "network",
                "previews", "volume:read", "volume:write");
    }

    @Test
    void volumePermissionsTargetVolumesAndTheRestSandboxes() {
        for (var p : Permission.values())
            assertThat(p.target()).as(p.wireName())
                    .isEqualTo(p.wireName().startsWith("volume:") ? Permission.Target.VOLUME : Permission.Target.SANDBOX);
    }

    @Test
    void nearMissesAreRefused() {
        for (String bad : List.of("", "EXEC", "Exec", " exec", "exec ", "sandbox", "sandbox:*", "*", "files", "sandbox_read",
                "SANDBOX_READ", "volume:read,volume:write"))
            assertRefused(bad, "permissions[2]");
    }

    @Test
    void nullIsRefusedLikeAnyUnknownName() {
        assertRefused(null, "permissions");
    }

    @Property
    void anyOtherTextIsAnInvalidRequestListingThePermissions(@ForAll("notWireNames") String wire) {
        assertRefused(wire, "permissions[0]");
    }

    @Property
    void parsingIsExact(@ForAll("permissions") Permission p, @ForAll("affixes") String prefix, @ForAll("affixes") String suffix) {
        String wire = prefix + p.wireName() + suffix;
        if (prefix.isEmpty() && suffix.isEmpty()) assertThat(Permission.parse(wire, "f")).isEqualTo(p);
        else if (!WIRE_NAMES.contains(wire)) assertRefused(wire, "f");
    }

    private static void assertRefused(String wire, String field) {
        assertThatThrownBy(() -> Permission.parse(wire, field))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
                    assertThat(e.details()).containsEntry("field", field);
                })
                .hasMessageContaining("'" + wire + "' is not a permission")
                .hasMessageContaining(String.join(", ", Arrays.stream(Permission.values()).map(Permission::wireName).toList()));
    }

    @Provide
    Arbitrary<String> notWireNames() {
        var letters = Arbitraries.strings().withChars("abcdefilnoprstuvwxkh:_-* ").ofMaxLength(20);
        return Arbitraries.oneOf(letters, Arbitraries.strings().ofMaxLength(20)).filter(s -> !WIRE_NAMES.contains(s));
    }

    @Provide
    Arbitrary<Permission> permissions() {
        return Arbitraries.of(Permission.class);
    }

    @Provide
    Arbitrary<String> affixes() {
        return Arbitraries.oneOf(Arbitraries.just(""), Arbitraries.strings().withChars(" :*aZ\t").ofMinLength(1).ofMaxLength(3));
    }
}
