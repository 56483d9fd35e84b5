#!/bin/bash
# rw-disk.sh ID [mount opts]: 4K random writes QD16 over 1G, IOPS, daemon CPU, vda sectors read per write
RF=${RF:-/tmp/bm/raidfuse}; id=$1; shift
d=/var/tmp/prof/$id
$RF mount "$@" $(cat $d/members) $d/mnt || exit 1
pid=$(cat $d/mnt/.raidfuse/pid)
sync; echo 3 > /proc/sys/vm/drop_caches
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
r0=$(awk '$3=="vda"{print $4, $6}' /proc/diskstats)
iops=$(fio --name=j --filename=$d/mnt/volume.img --rw=randwrite --bs=4k --iodepth=${QD:-16} --ioengine=libaio --direct=1 --size=${REGION:-1G} --io_size=${IOSZ:-512M} --output-format=terse --terse-version=3 | awk -F';' '{print $49}')
r1=$(awk '$3=="vda"{print $4, $6}' /proc/diskstats)
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
$RF umount $d/mnt
set -- $r0 $r1
n=$(( ${IOSZ_N:-131072} ))
echo "$id IOPS=$iops cpu_us/write=$(( (t1-t0)*10000 / n )) disk_reads/write=$(echo "scale=2; ($3-$1)/$n" | bc) disk_KiB/write=$(echo "scale=1; ($4-$2)/2/$n" | bc)"
