package io.stasis.templates.oci;

import io.stasis.core.spi.FileOwner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Which extended attributes of a layer reach the root, and how. {@code user.*} ones are kept as
 * they are (Linux allows none on a symlink). {@code security.capability} (file capabilities) is
 * kept, rewritten as a v3 value whose root id is the host uid of the sandbox's root, the way the
 * kernel writes it from inside a user namespace: the capabilities then work in the sandbox and
 * nowhere else (a v2 value would grant them to whoever runs the file on the host too). Everything
 * else is skipped with the reason: {@code trusted.*} is for the host's root (overlayfs keeps its
 * state there), other {@code security.*} ones are labels of security modules this host does not
 * use for sandboxes, and POSIX ACLs ({@code system.posix_acl_*}) name uids and gids unshifted.
 */
final class XattrPolicy {
    static final String CAPABILITY = "security.capability";
    private static final int REVISION_MASK = 0xff000000;
    private static final int REVISION_1 = 0x01000000;
    private static final int REVISION_2 = 0x02000000;
    private static final int REVISION_3 = 0x03000000;
    private static final int FLAG_EFFECTIVE = 0x000001;

    private XattrPolicy() {
    }

    /** What to do with one attribute. */
    sealed interface Decision permits Apply, Skip {
    }

    /** Set {@code name} to {@code value} (maybe rewritten from what the layer held). */
    record Apply(String name, byte[] value) implements Decision {
    }

    record Skip(String reason) implements Decision {
    }

    /** @param sandboxRoot the host ids of the sandbox's root: a capability's root id becomes its uid */
    static Decision decide(String name, byte[] value, boolean symlink, FileOwner sandboxRoot) {
        if (name.startsWith("user.")) {
            return symlink ? new Skip("Linux allows no user.* attribute on a symlink") : new Apply(name, value);
        }
        if (name.equals(CAPABILITY)) {
            if (symlink) return new Skip("a symlink has no file capabilities");
            byte[] shifted = capabilityForNamespace(value, sandboxRoot.uid());
            return shifted == null ? new Skip("not a valid file capability value (" + value.length + " bytes)") : new Apply(name, shifted);
        }
        if (name.startsWith("trusted.")) return new Skip("trusted.* attributes belong to the host's root (overlayfs state and the like)");
        if (name.startsWith("security.")) return new Skip("a security module label, not applied to sandbox files");
        if (name.startsWith("system.posix_acl_")) return new Skip("POSIX ACLs name uids and gids that would need shifting: not supported");
        return new Skip("attributes in this namespace are not applied");
    }

    /**
     * A {@code vfs_cap_data} value of revision 1, 2 or 3 as revision 3 ({@code vfs_ns_cap_data},
     * 24 bytes, little-endian) with {@code rootid}; null when the value is not one.
     */
    static byte[] capabilityForNamespace(byte[] value, int rootid) {
        if (value.length < 4) return null;
        var in = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        int magic = in.getInt(0);
        int words = switch (magic & REVISION_MASK) {
            case REVISION_1 -> value.length == 12 ? 1 : -1;
            case REVISION_2 -> value.length == 20 ? 2 : -1;
            case REVISION_3 -> value.length == 24 ? 2 : -1;
            default -> -1;
        };
        if (words < 0 || (magic & ~(REVISION_MASK | FLAG_EFFECTIVE)) != 0) return null;
        var out = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(REVISION_3 | (magic & FLAG_EFFECTIVE));
        for (int i = 0; i < 2; i++) {
            out.putInt(i < words ? in.getInt(4 + 8 * i) : 0); // permitted
            out.putInt(i < words ? in.getInt(8 + 8 * i) : 0); // inheritable
        }
        out.putInt(rootid);
        return out.array();
    }
}
