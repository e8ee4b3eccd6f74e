/// The stylesheet and colours of the pictures (one place to tune the look).
enum RunPictureStyle {
    static let css = """
    .bg{fill:#ffffff}\
    text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans",sans-serif;fill:#212529}\
    .title{font-weight:600}\
    .subtitle,.muted{fill:#6c757d}\
    .halo{paint-order:stroke;stroke:#ffffff;stroke-width:3px;stroke-linejoin:round}\
    .frame{fill:#f8f9fa;stroke:#adb5bd;stroke-width:1}\
    .fence{fill:#3b6fb6;fill-opacity:0.09;stroke:#3b6fb6;stroke-width:1.2;fill-rule:evenodd}\
    .fence-dot{fill:#3b6fb6;fill-opacity:0.7}\
    .corridor{fill:none;stroke:#3b6fb6;stroke-opacity:0.16;stroke-linecap:round;stroke-linejoin:round}\
    .corridor-line{fill:none;stroke:#3b6fb6;stroke-width:1;stroke-dasharray:4 3}\
    .fence-label{fill:#22497f}\
    .trk{fill:none;stroke-linejoin:round;stroke-linecap:round}\
    .trk-on{stroke:#d1495b;stroke-width:2.6}\
    .trk-acquiring{stroke:#f0a202;stroke-width:2.6}\
    .trk-off{stroke:#495057;stroke-width:1.4;stroke-dasharray:6 4}\
    .trk-unseen{stroke:#868e96;stroke-width:1;stroke-opacity:0.45}\
    .trk-unknown{stroke:#495057;stroke-width:1.6;stroke-dasharray:1.5 3}\
    .wake{fill:#f0a202;stroke:#5c3d00;stroke-width:0.8}\
    .ev{stroke:#ffffff;stroke-width:1.5}\
    .bl{fill:none;stroke-width:1.8}\
    .ev-enter{fill:#2f9e44}.ev-exit{fill:#7048e8}.ev-dwell{fill:#1098ad}.ev-location{fill:#495057}.ev-approach{fill:#e8590c}\
    .bl-enter{stroke:#2f9e44}.bl-exit{stroke:#7048e8}.bl-dwell{stroke:#1098ad}.bl-location{stroke:#495057}.bl-approach{stroke:#e8590c}\
    .legend{fill:#ffffff;fill-opacity:0.88;stroke:#ced4da}\
    .axis{stroke:#495057;stroke-width:1}\
    .grid{stroke:#dee2e6;stroke-width:1}\
    .zero{stroke:#d1495b;stroke-width:1;stroke-dasharray:3 3}\
    .dist{fill:none;stroke:#343a40;stroke-width:1.2;stroke-linejoin:round}\
    .on-shade{fill:#d1495b;fill-opacity:0.07}\
    .band-text{fill:#ffffff}.band-on{fill:#d1495b}.band-acquiring{fill:#f0a202}.band-off{fill:#e9ecef}.band-still{fill:#cfe3f3}.mode-a{fill:#4f6d7a}.mode-b{fill:#7a9e7e}\
    .scale{fill:#212529}.scale-alt{fill:#ffffff;stroke:#212529;stroke-width:1}\
    .north{fill:#212529}
    """
}
