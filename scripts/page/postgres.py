"""A PostgreSQL of the fleet page check's own, as the fleet tests make one (Tests/FleetTests/
FleetRig.swift, TestPostgres): initdb into the check's directory, run as the user postgres, unix
socket only (no TCP listener), stopped with pg_ctl."""
import os
import subprocess

BIN = "/usr/lib/postgresql/%d/bin" % max([int(v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit()] or [15])


class Postgres:
    def __init__(self, directory, port):
        self.directory = os.path.join(directory, "pg")
        self.port = port
        self.data = os.path.join(self.directory, "data")
        self.conninfo = f"host={self.directory} port={port} user=postgres dbname=postgres"
        self.started = False
        os.makedirs(self.directory)
        subprocess.run(["chown", "postgres", self.directory], check=True)
        self._as_postgres("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync")
        self._as_postgres("pg_ctl", "-D", self.data, "-o", f"-p {port} -k {self.directory} -c listen_addresses=''",
                          "-l", os.path.join(self.directory, "log"), "-w", "start")
        self.started = True

    def _as_postgres(self, tool, *arguments):
        result = subprocess.run(["runuser", "-u", "postgres", "--", os.path.join(BIN, tool), *arguments],
                                capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise AssertionError(f"{tool} failed: {result.stdout}{result.stderr}")
        return result.stdout

    def query(self, sql):
        """Rows of `sql`, fields split on tabs."""
        result = subprocess.run(["psql", self.conninfo, "-At", "-F", "\t", "-c", sql], capture_output=True, text=True, timeout=30)
        if result.returncode != 0:
            raise AssertionError(f"psql failed on {sql}: {result.stderr}")
        return [line.split("\t") for line in result.stdout.splitlines()]

    def stop(self):
        if self.started:
            self._as_postgres("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
            self.started = False
