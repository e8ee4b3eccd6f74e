import Foundation
import GeomonCore
@testable import GeomonDaemon
import GeomonTestSupport
import Testing

struct PictureTests {
    /// Writes the SVG into a temp dir; also checks it with the two external tools.
    static func validate(_ svg: String, name: String) throws -> (svg: String, png: String) {
        let dir = try TemporaryDirectory(prefix: "geomon-picture")
        let svgPath = try dir.write("\(name).svg", svg)
        let pngPath = dir.path("\(name).png")
        let xml = try runProcess(URL(fileURLWithPath: "/usr/bin/python3"),
                                 ["-c", "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])", svgPath])
        #expect(xml.exitCode == 0, "not well-formed XML: \(xml.stderr)")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/xmllint") {
            let lint = try runProcess(URL(fileURLWithPath: "/usr/bin/xmllint"), ["--noout", svgPath])
            #expect(lint.exitCode == 0 && lint.stderr.isEmpty, "xmllint: \(lint.stderr)")
        }
        let rsvg = try runProcess(URL(fileURLWithPath: "/usr/bin/rsvg-convert"), ["-o", pngPath, svgPath])
        #expect(rsvg.exitCode == 0 && rsvg.stderr.isEmpty, "rsvg-convert: \(rsvg.stderr)")
        let png = try Data(contentsOf: URL(fileURLWithPath: pngPath))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "rsvg-convert wrote no PNG")
        return (svgPath, pngPath)
    }

    static func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func hikePictureIsWellFormedAndRenders() throws {
        let input = try PictureScenario.hike()
        let rendering = RunPicture.render(input)
        let paths = try Self.validate(rendering.svg, name: "hike")
        if ProcessInfo.processInfo.environment["GEOMON_UPDATE_PICTURES"] == "1" {
            let images = TestSupport.packageRoot.appendingPathComponent("docs/images")
            try Data(rendering.svg.utf8).write(to: images.appendingPathComponent("replay-example.svg"))
            let png = try Data(contentsOf: URL(fileURLWithPath: paths.png))
            try png.write(to: images.appendingPathComponent("replay-example.png"))
        }
        print("hike picture: \(rendering.stats)")
    }
}
