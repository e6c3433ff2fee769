package io.stasis.core.template;

import io.stasis.core.exec.ExecRequest;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A copy step, done inside the build's sandbox: the context goes in on standard input and the
 * sandbox's own {@code tar} unpacks it, so a hostile archive (links out, {@code ..}, device nodes)
 * can reach no further than the sandbox it is built in. Works with busybox and GNU tools alike.
 */
final class CopyScript {
    private static final String SCRIPT = """
            set -e
            t=$(mktemp -d)
            trap 'rm -rf "$t"' EXIT
            chmod 755 "$t" # an archive without a ./ entry leaves it as mktemp made it, which "cp -a $t/." would copy
            tar -x $STASIS_COPY_GZIP -f - -C "$t"
            s="$t/$STASIS_COPY_SRC"
            if [ ! -e "$s" ] && [ ! -L "$s" ]; then echo "COPY: '$STASIS_COPY_SRC' is not in the build's context" >&2; exit 1; fi
            d="$STASIS_COPY_DEST"
            if [ -d "$s" ] && [ ! -L "$s" ]; then
              mkdir -p "$d"
              cp -a "$s/." "$d/"
            else
              case "$d" in
                */) mkdir -p "$d"; cp -a "$s" "$d" ;;
                *) mkdir -p "$(dirname "$d")"; cp -a "$s" "$d" ;;
              esac
            fi
            """;

    private CopyScript() {
    }

    static ExecRequest request(BuildStep.Copy copy, TemplateBuilds.StepSettings settings, byte[] context) {
        boolean gzip = context.length > 1 && (context[0] & 0xff) == 0x1f && (context[1] & 0xff) == 0x8b;
        String src = copy.src().equals(".") || copy.src().equals("./") ? "." : copy.src().replaceFirst("^\\./", "");
        var env = new java.util.LinkedHashMap<>(settings.env);
        env.put("STASIS_COPY_SRC", src);
        env.put("STASIS_COPY_DEST", settings.absolute(copy.dest()));
        env.put("STASIS_COPY_GZIP", gzip ? "-z" : "");
        return new ExecRequest(List.of("/bin/sh", "-c", SCRIPT), Optional.of("/"), Map.copyOf(env), Optional.of(context),
                BuildStep.DEFAULT_RUN_TIMEOUT);
    }
}
