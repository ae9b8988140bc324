#!/bin/sh
# Renders /etc/coturn/turnserver.conf.template into a private config and runs turnserver in the foreground.
# Needs TURN_SECRET (the same value as the relay's TURN_SECRET: `fly secrets set` on both apps),
# TURN_REALM and MEDIASOUP_ANNOUNCED_IP (the relay's: the only peer coturn relays to); on Fly.io the
# addresses come from the machine: UDP must use fly-global-services, TCP arrives on the machine's own
# address, and EXTERNAL_IP is the app's dedicated IPv4 (clients and the relay reach coturn there).
set -eu
: "${TURN_SECRET:?set TURN_SECRET (fly secrets set TURN_SECRET=...), the relay's TURN_SECRET}"
: "${TURN_REALM:?set TURN_REALM, e.g. turn.example.com}"
: "${EXTERNAL_IP:?set EXTERNAL_IP to the dedicated IPv4 (fly ips list)}"
: "${MEDIASOUP_ANNOUNCED_IP:?set MEDIASOUP_ANNOUNCED_IP to the relay's MEDIASOUP_ANNOUNCED_IP, the only address coturn relays to}"
# An IP literal (coturn takes no names here): IPv6 hex digits and colons (an IPv4 tail allowed), or dotted IPv4.
not_an_ip() { echo "MEDIASOUP_ANNOUNCED_IP must be the relay's IPv4 or IPv6 address, got '$MEDIASOUP_ANNOUNCED_IP'" >&2; exit 1; }
case "$MEDIASOUP_ANNOUNCED_IP" in
  *:*) case "$MEDIASOUP_ANNOUNCED_IP" in *[!0-9A-Fa-f:.]*) not_an_ip ;; esac ;;
  *.*.*.*) case "$MEDIASOUP_ANNOUNCED_IP" in *[!0-9.]*) not_an_ip ;; esac ;;
  *) not_an_ip ;;
esac
resolve() { getent ahostsv4 "$1" | awk 'NR==1 { print $1 }'; }
UDP_IP="${UDP_IP:-$(resolve fly-global-services)}"
TCP_IP="${TCP_IP:-$(hostname -i | awk '{ print $1 }')}"
: "${UDP_IP:?fly-global-services did not resolve: set UDP_IP}"
export TURN_SECRET TURN_REALM EXTERNAL_IP UDP_IP TCP_IP MEDIASOUP_ANNOUNCED_IP
export MIN_PORT="${MIN_PORT:-49152}" MAX_PORT="${MAX_PORT:-50751}"
# Half the relay ports: an allocation may hold two (EVEN-PORT reserves the next one).
export TOTAL_QUOTA=$(( (MAX_PORT - MIN_PORT + 1) / 2 ))
umask 077
envsubst '${TURN_SECRET} ${TURN_REALM} ${EXTERNAL_IP} ${UDP_IP} ${TCP_IP} ${MIN_PORT} ${MAX_PORT} ${TOTAL_QUOTA} ${MEDIASOUP_ANNOUNCED_IP}' \
  < /etc/coturn/turnserver.conf.template > /var/lib/coturn/turnserver.conf
exec turnserver -c /var/lib/coturn/turnserver.conf
