#!/bin/sh
# Renders /etc/coturn/turnserver.conf.template into a private config and runs turnserver in the foreground.
# Needs TURN_SECRET (the same value as the relay's TURN_SECRET: `fly secrets set` on both apps) and
# TURN_REALM; on Fly.io the addresses come from the machine: UDP must use fly-global-services, TCP
# arrives on the machine's own address, and EXTERNAL_IP is the app's dedicated IPv4 (clients and the
# relay reach coturn there).
set -eu
: "${TURN_SECRET:?set TURN_SECRET (fly secrets set TURN_SECRET=...), the relay's TURN_SECRET}"
: "${TURN_REALM:?set TURN_REALM, e.g. turn.example.com}"
: "${EXTERNAL_IP:?set EXTERNAL_IP to the dedicated IPv4 (fly ips list)}"
resolve() { getent ahostsv4 "$1" | awk 'NR==1 { print $1 }'; }
UDP_IP="${UDP_IP:-$(resolve fly-global-services)}"
TCP_IP="${TCP_IP:-$(hostname -i | awk '{ print $1 }')}"
: "${UDP_IP:?fly-global-services did not resolve: set UDP_IP}"
export TURN_SECRET TURN_REALM EXTERNAL_IP UDP_IP TCP_IP
export MIN_PORT="${MIN_PORT:-49152}" MAX_PORT="${MAX_PORT:-49251}"
umask 077
envsubst '${TURN_SECRET} ${TURN_REALM} ${EXTERNAL_IP} ${UDP_IP} ${TCP_IP} ${MIN_PORT} ${MAX_PORT}' \
  < /etc/coturn/turnserver.conf.template > /var/lib/coturn/turnserver.conf
exec turnserver -c /var/lib/coturn/turnserver.conf
