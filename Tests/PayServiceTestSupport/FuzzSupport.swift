// What the fuzz harness needs (the test config, the oracles, the signed-claims shop) lives in
// PayServiceFuzzSupport, which builds without SwiftNIO; every test that imports this module sees it.
@_exported import PayServiceFuzzSupport
