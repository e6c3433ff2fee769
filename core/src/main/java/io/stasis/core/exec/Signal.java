package io.stasis.core.exec;

import io.stasis.core.error.StasisException;
import java.util.Locale;

/** The POSIX signals callers may name (x86_64 numbers), by name without the SIG prefix. */
public enum Signal {
    HUP(1), INT(2), QUIT(3), ILL(4), TRAP(5), ABRT(6), BUS(7), FPE(8), KILL(9), USR1(10), SEGV(11), USR2(12),
    PIPE(13), ALRM(14), TERM(15), STKFLT(16), CHLD(17), CONT(18), STOP(19), TSTP(20), TTIN(21), TTOU(22),
    URG(23), XCPU(24), XFSZ(25), VTALRM(26), PROF(27), WINCH(28), IO(29), PWR(30), SYS(31);

    private final int number;

    Signal(int number) {
        this.number = number;
    }

    public int number() {
        return number;
    }

    public static Signal parse(String name) {
        String n = name.toUpperCase(Locale.ROOT);
        if (n.startsWith("SIG")) n = n.substring(3);
        try {
            return valueOf(n);
        } catch (IllegalArgumentException e) {
            throw StasisException.invalid("signal", "unknown signal '" + name + "'");
        }
    }

    static String nameOf(int number) {
        for (Signal s : values()) if (s.number == number) return s.name();
        return Integer.toString(number);
    }
}
