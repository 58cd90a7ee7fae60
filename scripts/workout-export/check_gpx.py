#!/usr/bin/env python3
"""Reads a workout GPX with gpxpy (the pin in requirements.txt) and prints what it found as one
JSON line prefixed "check_gpx: ", for Tests/AgentTests/WorkoutExportTests.swift to compare with
the workout's summary. Exit status 1 when gpxpy refuses the file.

Usage: PYTHON check_gpx.py FILE.gpx   (PYTHON from scripts/python-venv.sh requirements.txt workout-export)
"""
import json
import sys

import gpxpy
import gpxpy.gpx


def extension_values(point, name):
    """Integers of the Garmin TrackPointExtension child `name` (hr, cad) of one point."""
    values = []
    for extension in point.extensions:
        for element in extension.iter():
            if element.tag.rsplit("}", 1)[-1] == name and element.text is not None:
                values.append(int(element.text))
    return values


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        try:
            gpx = gpxpy.parse(handle)
        except gpxpy.gpx.GPXException as error:
            print(f"check_gpx: gpxpy refused the file: {error}")
            return 1
    points = [point for track in gpx.tracks for segment in track.segments for point in segment.points]
    times = [point.time for point in points if point.time is not None]
    report = {
        "gpxpy": gpxpy.__version__,
        "creator": gpx.creator,
        "tracks": len(gpx.tracks),
        "name": gpx.tracks[0].name if gpx.tracks else None,
        "type": gpx.tracks[0].type if gpx.tracks else None,
        "points": len(points),
        "length2d": gpx.length_2d(),
        "duration": gpx.get_duration(),
        "first": times[0].isoformat() if times else None,
        "last": times[-1].isoformat() if times else None,
        "elevations": sum(1 for point in points if point.elevation is not None),
        "hr": [value for point in points for value in extension_values(point, "hr")],
        "cad": [value for point in points for value in extension_values(point, "cad")],
    }
    print("check_gpx: " + json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
