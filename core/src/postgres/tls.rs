//! TLS for PostgreSQL connections: rustls with the Mozilla roots compiled in, so the addon does
//! not depend on the system's libssl (R-BIND-1: libpq's `sslmode` decides whether it is used).

use tokio_postgres_rustls::MakeRustlsConnect;

pub fn connector() -> MakeRustlsConnect {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    MakeRustlsConnect::new(config)
}
