package io.stasis.sdk;

import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLContextSpi;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;

/**
 * The JDK's default TLS context, set up only when something first uses it. {@code HttpClient}
 * asks for a context when it is built; the default one loads and parses the trusted certificates
 * then, which took ~140 ms of a cold CLI call that talks plain http and never needs TLS.
 */
final class DeferredTls extends SSLContext {
    DeferredTls() {
        super(new Spi(), null, "Default");
    }

    private static final class Spi extends SSLContextSpi {
        private SSLContext delegate;

        private synchronized SSLContext delegate() {
            if (delegate == null) {
                try {
                    delegate = SSLContext.getDefault();
                } catch (GeneralSecurityException e) {
                    throw new IllegalStateException("the JDK's default TLS context is unavailable", e);
                }
            }
            return delegate;
        }

        @Override
        protected void engineInit(KeyManager[] keys, TrustManager[] trust, SecureRandom random) {
            throw new UnsupportedOperationException("the default TLS context is initialized by the JDK");
        }

        @Override
        protected SSLSocketFactory engineGetSocketFactory() {
            return delegate().getSocketFactory();
        }

        @Override
        protected SSLServerSocketFactory engineGetServerSocketFactory() {
            return delegate().getServerSocketFactory();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine() {
            return delegate().createSSLEngine();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine(String host, int port) {
            return delegate().createSSLEngine(host, port);
        }

        @Override
        protected SSLSessionContext engineGetServerSessionContext() {
            return delegate().getServerSessionContext();
        }

        @Override
        protected SSLSessionContext engineGetClientSessionContext() {
            return delegate().getClientSessionContext();
        }

        @Override
        protected SSLParameters engineGetDefaultSSLParameters() {
            return delegate().getDefaultSSLParameters();
        }

        @Override
        protected SSLParameters engineGetSupportedSSLParameters() {
            return delegate().getSupportedSSLParameters();
        }
    }
}
