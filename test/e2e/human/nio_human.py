#!/usr/bin/python3
"""A person's end-to-end-encrypted Matrix client for the E2EE test against Synapse.

An independent implementation of Matrix encryption (matrix-nio with libolm, Debian's
python3-matrix-nio and python3-olm), driven by the TypeScript test over stdin/stdout:
one JSON request per line ({"id", "cmd", "args"}), one JSON reply per line ({"id",
"ok", "result"} or {"id", "ok": false, "error"}). A background sync keeps the client's
keys, device lists and to-device messages current, as a real client's does.
"""

import asyncio
import base64
import json
import sys
import traceback
from uuid import uuid4

from nio import (
    AsyncClient,
    AsyncClientConfig,
    MegolmEvent,
    RoomMessagesResponse,
    RoomSendResponse,
    ToDeviceMessage,
    UploadResponse,
)
from nio.api import Api
from nio.crypto.attachments import decrypt_attachment, encrypt_attachment

client = None
sync_task = None


def event_json(event):
    """What the test sees of one timeline event: who, what, and whether it was encrypted."""
    source = getattr(event, "source", {}) or {}
    decrypted = getattr(event, "decrypted", False)
    undecryptable = isinstance(event, MegolmEvent)
    return {
        "event_id": getattr(event, "event_id", source.get("event_id")),
        "sender": getattr(event, "sender", source.get("sender")),
        "type": source.get("type"),
        "content": source.get("content", {}),
        "decrypted": bool(decrypted),
        "undecryptable": undecryptable,
        # Decrypted with a room key from a device this client has verified.
        "verified": bool(getattr(event, "verified", False)),
        "session_id": getattr(event, "session_id", None) if undecryptable else None,
    }


async def wait_for_room(room_id, timeout=30):
    for _ in range(int(timeout * 10)):
        room = client.rooms.get(room_id)
        if room is not None and room.encrypted:
            return room
        await asyncio.sleep(0.1)
    raise RuntimeError(f"room {room_id} did not sync as encrypted")


async def ensure_shared(room_id):
    """Makes sure the room's outbound Megolm session is shared with every member's devices."""
    room = await wait_for_room(room_id)
    if not room.members_synced:
        await client.joined_members(room_id)
    if client.should_query_keys:
        await client.keys_query()
    if client.olm.should_share_group_session(room_id):
        await client.share_group_session(room_id, ignore_unverified_devices=True)


async def send_encrypted(room_id, event_type, content):
    """Encrypts any event type (nio 0.20 leaves reactions in the clear) and sends it."""
    await ensure_shared(room_id)
    message_type, encrypted = client.encrypt(room_id, event_type, content)
    method, path, data = Api.room_send(client.access_token, room_id, message_type, encrypted, str(uuid4()))
    # The public room_send would leave a reaction unencrypted.
    response = await client._send(RoomSendResponse, method, path, data, (room_id,))  # noqa: SLF001
    if not hasattr(response, "event_id"):
        raise RuntimeError(f"send failed: {response}")
    return response.event_id


def bot_device(user_id, device_id):
    devices = client.device_store.active_user_devices(user_id)
    for device in devices:
        if device.id == device_id:
            return device
    raise RuntimeError(f"device {device_id} of {user_id} is not known")


withheld = {}


async def handle(cmd, args):
    global client, sync_task
    if cmd == "login":
        config = AsyncClientConfig(encryption_enabled=True, store_sync_tokens=True)
        client = AsyncClient(
            args["homeserver"], args["user_id"], store_path=args["store"], config=config
        )
        response = await client.login(password=args["password"], device_name=args.get("device_name", "nio"))
        if not getattr(response, "access_token", None):
            raise RuntimeError(f"login failed: {response}")
        if client.should_upload_keys:
            await client.keys_upload()
        await client.sync(timeout=0, full_state=True)
        sync_task = asyncio.create_task(client.sync_forever(timeout=500, full_state=True))
        return {"device_id": client.device_id, "curve25519": client.olm.account.identity_keys["curve25519"]}
    if cmd == "create_room":
        encryption = {"algorithm": "m.megolm.v1.aes-sha2"}
        if args.get("rotation_period_msgs"):
            encryption["rotation_period_msgs"] = args["rotation_period_msgs"]
        response = await client.room_create(
            name=args["name"],
            invite=args.get("invite", []),
            initial_state=[{"type": "m.room.encryption", "state_key": "", "content": encryption}],
        )
        if not getattr(response, "room_id", None):
            raise RuntimeError(f"room create failed: {response}")
        await wait_for_room(response.room_id)
        return response.room_id
    if cmd == "invite":
        await client.room_invite(args["room_id"], args["user_id"])
        return None
    if cmd == "join":
        response = await client.join(args["room_id"])
        if not getattr(response, "room_id", None):
            raise RuntimeError(f"join failed: {response}")
        await wait_for_room(args["room_id"])
        return None
    if cmd == "send":
        return await send_encrypted(args["room_id"], args["type"], args["content"])
    if cmd == "rotate":
        # What a client does when its session is due: the next message starts a new one.
        client.invalidate_outbound_session(args["room_id"])
        return None
    if cmd == "send_late_key":
        # A message whose room key reaches one device only later: the session is shared with
        # everyone else, the message sent, and the key for that device kept back.
        room_id = args["room_id"]
        device = bot_device(args["user_id"], args["device_id"])
        client.blacklist_device(device)
        await ensure_shared(room_id)
        session = client.olm.outbound_group_sessions[room_id]
        key = {
            "algorithm": "m.megolm.v1.aes-sha2",
            "room_id": room_id,
            "session_id": session.id,
            "session_key": session.session_key,
        }
        event_id = await send_encrypted(room_id, "m.room.message", args["content"])
        withheld[event_id] = (args["user_id"], args["device_id"], key)
        client.unblacklist_device(device)
        return {"event_id": event_id, "session_id": session.id}
    if cmd == "deliver_late_key":
        user_id, device_id, key = withheld.pop(args["event_id"])
        device = bot_device(user_id, device_id)
        olm_session = client.olm.session_store.get(device.curve25519)
        if olm_session is None:
            await client.keys_claim({user_id: [device_id]})
            olm_session = client.olm.session_store.get(device.curve25519)
        content = client.olm._olm_encrypt(olm_session, device, "m.room_key", key)  # noqa: SLF001
        response = await client.to_device(ToDeviceMessage("m.room.encrypted", user_id, device_id, content))
        if getattr(response, "transport_response", None) is not None and response.transport_response.status != 200:
            raise RuntimeError(f"to-device send failed: {response}")
        return None
    if cmd == "send_file":
        data = args["text"].encode("utf-8")
        ciphertext, keys = encrypt_attachment(data)
        upload, _ = await client.upload(
            lambda *_: ciphertext, content_type="application/octet-stream", filename=args["name"], filesize=len(ciphertext)
        )
        if not isinstance(upload, UploadResponse):
            raise RuntimeError(f"upload failed: {upload}")
        file = {"url": upload.content_uri, **keys}
        content = {
            "msgtype": "m.file",
            "body": args["name"],
            "filename": args["name"],
            "info": {"mimetype": args["mime"], "size": len(data)},
            "file": file,
        }
        return await send_encrypted(args["room_id"], "m.room.message", content)
    if cmd == "download_encrypted":
        # The authenticated media API (Matrix 1.11); Synapse no longer serves new media unauthenticated.
        file = args["file"]
        server, media_id = file["url"][len("mxc://"):].split("/", 1)
        url = f"{client.homeserver}/_matrix/client/v1/media/download/{server}/{media_id}"
        headers = {"Authorization": f"Bearer {client.access_token}"}
        async with client.client_session.get(url, headers=headers) as response:
            if response.status != 200:
                raise RuntimeError(f"download failed: HTTP {response.status} {await response.text()}")
            body = await response.read()
        plain = decrypt_attachment(body, file["key"]["k"], file["hashes"]["sha256"], file["iv"])
        return {"base64": base64.b64encode(plain).decode()}
    if cmd == "messages":
        room_id = args["room_id"]
        response = await client.room_messages(room_id, start=client.next_batch, limit=args.get("limit", 300))
        if not isinstance(response, RoomMessagesResponse):
            raise RuntimeError(f"messages failed: {response}")
        events = []
        for event in reversed(response.chunk):
            # The relation of an encrypted event may sit in its clear part only (where the
            # server can aggregate it): keep it to read after decryption.
            envelope = (getattr(event, "source", {}) or {}).get("content", {}).get("m.relates_to")
            if isinstance(event, MegolmEvent):
                try:
                    event = client.decrypt_event(event)
                except Exception:  # noqa: BLE001 - undecryptable stays as it is
                    pass
            described = event_json(event)
            described["relates_to"] = described["content"].get("m.relates_to", envelope)
            events.append(described)
        return events
    if cmd == "devices":
        # The devices of a user as this client knows them (it queries keys when the server said they changed).
        if client.should_query_keys:
            await client.keys_query()
        return [
            {"device_id": d.id, "ed25519": d.ed25519, "curve25519": d.curve25519, "verified": client.olm.is_device_verified(d)}
            for d in client.device_store.active_user_devices(args["user_id"])
        ]
    if cmd == "verify":
        # What a person does with Element's `/verify <device id> <key>`: mark the device
        # verified only when the key the server publishes is the one they were told.
        device = bot_device(args["user_id"], args["device_id"])
        if device.ed25519 != args["ed25519"]:
            raise RuntimeError(f"key mismatch: the server publishes {device.ed25519}, expected {args['ed25519']}")
        client.verify_device(device)
        return None
    if cmd == "whoami":
        return {"device_id": client.device_id}
    if cmd == "close":
        if sync_task:
            sync_task.cancel()
        await client.close()
        return None
    raise RuntimeError(f"unknown command {cmd}")


async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = await reader.readline()
        if not line:
            break
        request = json.loads(line)
        try:
            result = await handle(request["cmd"], request.get("args", {}))
            reply = {"id": request["id"], "ok": True, "result": result}
        except Exception as err:  # noqa: BLE001 - every failure goes back to the test
            reply = {"id": request["id"], "ok": False, "error": f"{err}\n{traceback.format_exc()}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if request["cmd"] == "close":
            break


if __name__ == "__main__":
    asyncio.run(main())
